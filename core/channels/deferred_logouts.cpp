#include "core/channels/deferred_logouts.hpp"

#include <spdlog/spdlog.h>

#include <vector>

namespace xconn {

std::string deferred_logouts::key(std::string_view plugin_id, std::string_view channel_id) {
  return std::string(plugin_id) + "\n" + std::string(channel_id);
}

void deferred_logouts::add(const std::string& plugin_id, const std::string& channel_id) {
  write_batch batch;
  batch.put(std::string(database), key(plugin_id, channel_id), "");
  db_.write(std::move(batch), [plugin_id, channel_id](std::error_code ec) {
    if (ec) spdlog::error("[plugin {}] channel {}: the owed sign-out could not be recorded: {}", plugin_id, channel_id,
                          ec.message());
  });
}

std::size_t deferred_logouts::pending(std::string_view plugin_id) const {
  std::size_t n = 0;
  db_.scan(database, key(plugin_id, ""), [&](std::string_view, std::string_view) {
    ++n;
    return true;
  });
  return n;
}

std::size_t deferred_logouts::run(connector& conn) {
  std::vector<std::string> channels;
  auto prefix = key(conn.id(), "");
  db_.scan(database, prefix, [&](std::string_view k, std::string_view) {
    channels.emplace_back(k.substr(prefix.size()));
    return true;
  });
  for (const auto& id : channels) {
    conn.auth_logout(id, conn.make_strand(), std::chrono::seconds(timeout_s_),
        [this, plugin = conn.id(), id](call_result r) {
          if (!r.ok) {
            spdlog::warn("[plugin {}] channel {}: owed sign-out failed ({}); tried again at its next load", plugin, id,
                         r.code);
            return;
          }
          spdlog::info("[plugin {}] channel {}: owed sign-out done", plugin, id);
          write_batch batch;
          batch.erase(std::string(database), key(plugin, id));
          db_.write(std::move(batch));
        });
  }
  if (!channels.empty())
    spdlog::info("[plugin {}] {} sign-outs owed since it was gone are running", conn.id(), channels.size());
  return channels.size();
}

}  // namespace xconn
