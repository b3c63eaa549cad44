// Reading the queues, msg_id windows and last deliveries back from the store at start.
#include "core/messaging/inbound_service.hpp"

#include "core/messaging/inbound_records.hpp"

#include <spdlog/spdlog.h>

namespace xconn {

std::size_t inbound_service::load() {
  std::size_t n = 0;
  write_batch orphans;
  db_.scan(messages_db, "", [&](std::string_view key, std::string_view value) {
    auto parts = parse_inbound_message_key(key);
    auto route = parts ? channels_.route_of(parts->channel_id) : std::nullopt;
    // The index only: the bodies stay in the map until the message is sent.
    auto m = route ? inbound_message::from_record(parts->seq, value, false) : std::nullopt;
    if (!route || !m) {
      orphans.erase(std::string(messages_db), std::string(key));
      return true;
    }
    const auto& channel_id = parts->channel_id;
    auto& sh = shard_of(channel_id);
    std::lock_guard lock(sh.mutex);
    state_for(sh, channel_id, route->plugin_id).inbox.restore(std::move(*m));
    ++sh.counters_by_plugin[route->plugin_id].pending;
    ++n;
    return true;
  });
  db_.scan(ids_db, "", [&](std::string_view key, std::string_view value) {
    auto slash = key.find('/');
    std::string channel_id(key.substr(0, slash == std::string_view::npos ? 0 : slash));
    auto route = channel_id.empty() ? std::nullopt : channels_.route_of(channel_id);
    if (!route) {
      orphans.erase(std::string(ids_db), std::string(key));
      return true;
    }
    auto& sh = shard_of(channel_id);
    std::lock_guard lock(sh.mutex);
    auto taken = parse_inbound_id_record(value);
    state_for(sh, channel_id, route->plugin_id)
        .inbox.remember(std::string(key.substr(slash + 1)), taken.until, taken.message_id);
    return true;
  });
  db_.scan(last_db, "", [&](std::string_view key, std::string_view value) {
    auto last = channels_.route_of(key) ? last_inbound_from_record(value) : std::nullopt;
    if (last) {
      auto& sh = shard_of(key);
      std::lock_guard lock(sh.mutex);
      sh.last.emplace(std::string(key), std::move(*last));
    }
    else orphans.erase(std::string(last_db), std::string(key));
    return true;
  });
  if (!orphans.ops.empty()) {
    spdlog::info("{} inbound records of channels that no longer exist erased", orphans.ops.size());
    db_.write(std::move(orphans));
  }
  return n;
}


}  // namespace xconn
