// The service's life, its shards, and what leaves a queue (retire, the tick, ended channels). Reading back is in
// inbound_load.cpp, taking an emit in inbound_emit.cpp, sending and acks in inbound_delivery.cpp.
#include "core/messaging/inbound_service.hpp"

#include "core/base/ids.hpp"
#include "core/base/log_interval.hpp"
#include "core/messaging/inbound_records.hpp"

#include <spdlog/spdlog.h>

namespace xconn {

namespace {

// A flood drops or expires messages by the thousand: a log line per 10 s with a count, not one per message.
log_interval expiries_logged(std::chrono::seconds(10));
log_interval evictions_logged(std::chrono::seconds(10));

constexpr long long id_sweep_period_ms = 60000;

}  // namespace

inbound_service::inbound_service(store& db, const config& cfg, channel_service& channels,
                                 connector_registry& connectors, boost::asio::io_context& io, event_log& events,
                                 file_lookup files,
                                 std::function<void()> also_on_tick, now_fn now)
    : db_(db),
      cfg_(cfg),
      channels_(channels),
      connectors_(connectors),
      io_(io),
      events_(events),
      now_(now ? std::move(now) : now_fn(unix_ms)),
      files_(std::move(files)),
      policy_{cfg.delivery.ack_timeout_s * 1000LL, cfg.delivery.retry_max_s * 1000LL,
              static_cast<std::size_t>(cfg.delivery.window),
              static_cast<std::size_t>(cfg.delivery.max_pending_per_channel)},
      tick_timer_(io.get_executor(), tick_period, [this] { tick(); }),
      also_on_tick_(std::move(also_on_tick)) {}

inbound_service::~inbound_service() {
  stop();
  db_.flush();  // no commit may still be on its way back to this object
}


void inbound_service::start() { tick_timer_.start(); }

void inbound_service::stop() {
  stopped_ = true;
  tick_timer_.stop();
}

inbound_service::counters& inbound_service::counters::operator+=(const counters& o) {
  accepted += o.accepted;
  duplicates += o.duplicates;
  refused += o.refused;
  sent += o.sent;
  redelivered += o.redelivered;
  delivered += o.delivered;
  rejected += o.rejected;
  expired += o.expired;
  evicted += o.evicted;
  pending += o.pending;
  return *this;
}

inbound_service::shard& inbound_service::shard_of(std::string_view channel_id) const {
  return shards_[std::hash<std::string_view>{}(channel_id) % shard_count];
}

inbound_service::channel_state& inbound_service::state_for(shard& sh, const std::string& channel_id,
                                                           const std::string& plugin_id) {
  auto it = sh.channels.find(channel_id);
  if (it == sh.channels.end()) it = sh.channels.try_emplace(channel_id, policy_, plugin_id).first;
  return it->second;
}


void inbound_service::retire(shard& sh, channel_state& st, const std::string& channel_id,
                             const std::vector<inbound_message>& gone, inbox_exit why, std::string_view code,
                             write_batch& batch) {
  auto& count = sh.counters_by_plugin[st.plugin_id];
  for (const auto& m : gone) {
    batch.erase(std::string(messages_db), inbound_message_key(channel_id, m.seq));
    if (count.pending) --count.pending;
    switch (why) {
      case inbox_exit::accepted:
      case inbox_exit::duplicate:
        if (m.trigger) ++count.delivered;
        break;
      case inbox_exit::rejected:
        ++count.rejected;
        spdlog::warn("[plugin {}] channel {}: message {} rejected for good ({})", st.plugin_id, channel_id,
                     m.message_id, code);
        break;
      case inbox_exit::expired: {
        ++count.expired;
        if (auto n = expiries_logged.count())
          spdlog::warn("[plugin {}] channel {}: {} message(s) expired undelivered since the last such line",
                       st.plugin_id, channel_id, n);
        break;
      }
      case inbox_exit::evicted: {
        ++count.evicted;
        if (auto n = evictions_logged.count())
          spdlog::warn("[plugin {}] channel {}: {} message(s) dropped undelivered since the last such line "
                       "(capacity_exceeded, {} kept)", st.plugin_id, channel_id, n, policy_.capacity);
        break;
      }
    }
  }
}

void inbound_service::tick() {
  if (stopped_) return;
  // The last burst's count, once its interval is over (the counts per plugin: its health's inbound).
  if (auto n = evictions_logged.flush())
    spdlog::warn("{} message(s) dropped undelivered since the last such line (capacity_exceeded)", n);
  if (auto n = expiries_logged.flush()) spdlog::warn("{} message(s) expired undelivered since the last such line", n);
  long long t = now();
  write_batch batch;
  const bool sweep_ids = t >= next_id_sweep_;
  if (sweep_ids) next_id_sweep_ = t + id_sweep_period_ms;
  for (auto& sh : shards_) {
    std::lock_guard lock(sh.mutex);
    for (auto& [id, st] : sh.channels) {
      if (!st.inbox.has_work()) continue;
      retire(sh, st, id, st.inbox.expire(t), inbox_exit::expired, "expired", batch);
      if (st.inbox.check_timeouts(t))
        spdlog::info("[plugin {}] channel {}: no ack within {} s, retrying in {} ms", st.plugin_id, id,
                     cfg_.delivery.ack_timeout_s, st.inbox.paused_until() - t);
      if (!st.inbox.backing_off(t)) schedule_pump(sh, id);
    }
    if (sweep_ids) forget_expired_ids(sh, t);
  }
  if (!batch.ops.empty()) db_.write(std::move(batch));
  if (also_on_tick_) also_on_tick_();
}

void inbound_service::forget_expired_ids(shard& sh, long long t) {
  std::vector<std::string> keys;
  for (auto& [id, st] : sh.channels)
    for (const auto& msg_id : st.inbox.forget_expired_ids(t)) keys.push_back(inbound_id_key(id, msg_id));
  if (!keys.empty()) db_.erase_gradually(std::string(ids_db), std::move(keys));
}

void inbound_service::drop_channels(const std::vector<std::string>& channel_ids) {
  write_batch batch;
  for (const auto& id : channel_ids) {
    auto& sh = shard_of(id);
    std::lock_guard lock(sh.mutex);
    if (sh.last.erase(id)) batch.erase(std::string(last_db), id);
    auto it = sh.channels.find(id);
    if (it == sh.channels.end()) continue;
    auto& count = sh.counters_by_plugin[it->second.plugin_id];
    for (const auto& m : it->second.inbox.clear()) {
      batch.erase(std::string(messages_db), inbound_message_key(id, m.seq));
      if (count.pending) --count.pending;
    }
    sh.channels.erase(it);
  }
  // The msg_id windows of these channels, whatever the memory held.
  for (const auto& id : channel_ids)
    db_.scan(ids_db, id + "/", [&](std::string_view key, std::string_view) {
      batch.erase(std::string(ids_db), std::string(key));
      return true;
    });
  if (!batch.ops.empty()) db_.write(std::move(batch));
}

inbound_service::counters inbound_service::stats(std::string_view plugin_id) const {
  counters sum;
  for (const auto& sh : shards_) {
    std::lock_guard lock(sh.mutex);
    if (auto it = sh.counters_by_plugin.find(plugin_id); it != sh.counters_by_plugin.end()) sum += it->second;
  }
  return sum;
}

std::optional<inbound_service::last_inbound> inbound_service::last_delivered(std::string_view channel_id) const {
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  auto it = sh.last.find(channel_id);
  return it == sh.last.end() ? std::nullopt : std::optional(it->second);
}

std::size_t inbound_service::pending(std::string_view channel_id) const {
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  auto it = sh.channels.find(channel_id);
  return it == sh.channels.end() ? 0 : it->second.inbox.size();
}

}  // namespace xconn
