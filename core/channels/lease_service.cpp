#include "core/channels/lease_service.hpp"

#include "core/channels/connector_ids.hpp"
#include "core/base/ids.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace xconn {
namespace json = boost::json;

lease_service::lease_service(store& db, const config& cfg, channel_service& channels, connector_registry& connectors,
                             consumer_registry& consumers, deferred_logouts& owed, boost::asio::io_context& io,
                             now_fn now)
    : db_(db),
      cfg_(cfg),
      channels_(channels),
      connectors_(connectors),
      consumers_(consumers),
      owed_(owed),
      io_(io),
      now_(now ? std::move(now) : now_fn(unix_ms)),
      leases_(cfg.leases.connector_offline_s * 1000LL),
      // Often enough that a lease ends at most a quarter of itself late, never busier than 10 times a second.
      tick_timer_(io.get_executor(),
                  periodic_timer::quarter_of(std::chrono::seconds(cfg.leases.connector_offline_s),
                                             std::chrono::milliseconds(100), std::chrono::seconds(5)),
                  [this] { tick(); }) {
  // However a channel stops being signed in, its shared consumers go with it, and one that lost its last channel
  // stops (the registry answers a repeat with nothing, so each is stopped once).
  channels_.on_signed_out([this](const std::string& plugin_id, const std::string& channel_id) {
    auto stopped = consumers_.release_channel(plugin_id, channel_id);
    if (stopped.empty()) return;
    if (auto conn = connectors_.find(plugin_id)) conn->stop_consumers(stopped, std::chrono::seconds(cfg_.tools.timeout_s));
  });
}

lease_service::~lease_service() {
  channels_.on_signed_out({});
  stop();
  db_.flush();
}

std::size_t lease_service::load() {
  long long t = now_();
  std::set<std::string> known;
  std::lock_guard lock(mutex_);
  db_.scan(connector_ids::database, "", [&](std::string_view key, std::string_view value) {
    std::string id(key);
    known.insert(id);
    boost::system::error_code ec;
    auto v = json::parse(value, ec);
    auto* deadline = !ec && v.is_object() ? v.as_object().if_contains("lease_expires_at") : nullptr;
    if (deadline && deadline->is_int64()) {
      leases_.restore(id, deadline->as_int64());
    } else if (auto started = leases_.start_grace(id, t)) {
      // Killed while sockets held it: its lease starts with this run, and is recorded so the next one keeps it.
      persist(id, started);
    }
    return true;
  });
  // Channels whose owner is no longer a known id have no runtime instance at all: they go now.
  for (const auto& owner : channels_.owners())
    if (!known.contains(owner)) {
      spdlog::info("channels of connector_id {} (no longer registered) are deregistered", owner);
      for (auto& c : channels_.owned_by(owner)) waiting_.push_back(std::move(c));
    }
  return leases_.leased();
}

void lease_service::start() {
  tick_timer_.start();
  std::lock_guard lock(mutex_);
  boost::asio::post(io_, [this] { pump_deregistrations(); });
}

void lease_service::stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  tick_timer_.stop();
}

void lease_service::persist(const std::string& connector_id, std::optional<long long> deadline) {
  auto record = db_.get(connector_ids::database, connector_id);
  if (!record) return;  // deregistered meanwhile
  boost::system::error_code ec;
  auto v = json::parse(*record, ec);
  if (ec || !v.is_object()) return;
  auto& o = v.as_object();
  if (deadline)
    o["lease_expires_at"] = *deadline;
  else
    o.erase("lease_expires_at");
  write_batch batch;
  batch.put(std::string(connector_ids::database), connector_id, json::serialize(o));
  db_.write(std::move(batch), [connector_id](std::error_code e) {
    if (e) spdlog::error("lease of {} could not be recorded: {}", connector_id, e.message());
  });
}

void lease_service::hello(const std::string& connector_id) {
  std::lock_guard lock(mutex_);
  if (leases_.hello(connector_id)) {
    spdlog::info("connector_id {} is back: its offline lease is cancelled", connector_id);
    persist(connector_id, std::nullopt);
  }
}

void lease_service::socket_closed(const std::string& connector_id) {
  std::lock_guard lock(mutex_);
  if (auto deadline = leases_.socket_closed(connector_id, now_())) {
    spdlog::info("connector_id {} has no data plane: its offline lease of {} s starts", connector_id,
                 cfg_.leases.connector_offline_s);
    persist(connector_id, deadline);
  }
}

void lease_service::tick() {
  std::vector<std::string> expired;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    expired = leases_.expire(now_());
  }
  for (const auto& id : expired) deregister_connector(id);
}

void lease_service::deregister_connector(const std::string& connector_id) {
  // The id first, durably: a hello naming it from now on gets a new one, so once a channel of it is seen gone, so
  // is the id (a hello read the store before the erase committed, seen on a loaded machine).
  write_batch batch;
  batch.erase(std::string(connector_ids::database), connector_id);
  db_.write(std::move(batch), [this, connector_id](std::error_code) {
    boost::asio::post(io_, [this, connector_id] { deregister_channels_of(connector_id); });
  });
}

void lease_service::deregister_channels_of(const std::string& connector_id) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
  }
  auto owned = channels_.owned_by(connector_id);
  spdlog::info("connector_id {} offline lease expired: deregistered, {} channels to deregister", connector_id,
               owned.size());
  {
    std::lock_guard lock(mutex_);
    for (auto& c : owned) waiting_.push_back(std::move(c));
  }
  pump_deregistrations();
}

void lease_service::pump_deregistrations() {
  std::vector<channel> next;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    while (running_ < deregistrations_in_flight && !waiting_.empty()) {
      next.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
      ++running_;
    }
  }
  for (const auto& c : next) deregister_channel(c);
}

void lease_service::deregister_channel(const channel& c) {
  auto conn = connectors_.find(c.plugin_id);
  if (!conn) {
    // The plugin is not loaded: the ids stop working now; its sign-out runs when it is loaded again.
    owed_.add(c.plugin_id, c.id);
    return finish_channel(c);
  }
  // The plugin's own sign-out path, as for a user logout (never channel.close): target state and login go.
  conn->auth_logout(c.id, channels_.strand_for(*conn, c.id), std::chrono::seconds(cfg_.tools.timeout_s),
                    [this, c](call_result r) {
                      if (!r.ok)
                        spdlog::warn("[plugin {}] channel {}: sign-out at deregistration failed ({})", c.plugin_id,
                                     c.id, r.code);
                      finish_channel(c);
                    });
}

void lease_service::finish_channel(const channel& c) {
  channels_.calls().drop_channel(c.plugin_id, c.id);
  auto stopped = consumers_.release_channel(c.plugin_id, c.id);
  channels_.remove({c.id});  // its record; the inbound and outbound state go with the dropped listener
  spdlog::info("[plugin {}] channel {} of connector_id {} force-deregistered", c.plugin_id, c.id, c.owner);
  if (auto conn = connectors_.find(c.plugin_id)) conn->stop_consumers(stopped, std::chrono::seconds(cfg_.tools.timeout_s));
  {
    std::lock_guard lock(mutex_);
    --running_;
    ++deregistered_;
  }
  // Posted, not called: a plugin that is not loaded finishes at once, and 10,000 of them must not recurse.
  boost::asio::post(io_, [this] { pump_deregistrations(); });
}

std::size_t lease_service::deregistrations_pending() const {
  std::lock_guard lock(mutex_);
  return waiting_.size() + running_;
}

std::uint64_t lease_service::deregistered() const {
  std::lock_guard lock(mutex_);
  return deregistered_;
}

}  // namespace xconn
