// Inbound messages of the whole server (docs/protocol.md "Inbound messages"): a plugin's emit is checked, committed to
// the channel's queue in LMDB (`inbound`, plus the msg_id window in `inbound_ids`) before the plugin hears "ok",
// delivered in order to the channel's route as chat.message (IM v2) or message.push (IM v1), redelivered with backoff
// until xAgent acknowledges it, and erased once acknowledged, expired or evicted: no transcript stays behind.
//
// Emits come from plugin threads, acks from I/O threads, commits from the store's writer. The channels are
// spread over shards by id, each with its own mutex (one mutex for all was the most contended lock under inbound
// load); nothing slow runs under one. Deliveries and the periodic tick run on the I/O threads.
#pragma once

#include "core/channels/channel_service.hpp"
#include "core/events/event_log.hpp"
#include "core/base/config.hpp"
#include "core/base/periodic_timer.hpp"
#include "core/messaging/last_inbound.hpp"
#include "core/plugin_host/connector.hpp"
#include "core/plugin_host/connector_registry.hpp"
#include "core/files/file_store.hpp"
#include "core/messaging/inbox.hpp"
#include "core/store/store.hpp"

#include <boost/asio/io_context.hpp>

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace xconn {

class inbound_service {
 public:
  static constexpr std::string_view messages_db = "inbound";
  static constexpr std::string_view ids_db = "inbound_ids";
  // By channel: the latest triggering message delivered there (where a reply goes, across restarts).
  static constexpr std::string_view last_db = "inbound_last";
  using now_fn = std::function<long long()>;  // unix ms
  // How often expiry, ack timeouts and redelivery are checked.
  static constexpr std::chrono::milliseconds tick_period{100};

  // What a plugin's inbound traffic came to, for /health and /metrics.
  struct counters {
    std::uint64_t accepted = 0;     // emits stored
    std::uint64_t duplicates = 0;   // emits dropped: msg_id already taken
    std::uint64_t refused = 0;      // emits refused (invalid, unknown channel, store failure)
    std::uint64_t sent = 0;         // transmissions, first ones and redeliveries
    std::uint64_t redelivered = 0;  // transmissions after the first
    std::uint64_t delivered = 0;    // ended by accepted or duplicate (or, on IM v1, written)
    std::uint64_t rejected = 0;     // ended by rejected, retryable false
    std::uint64_t expired = 0;
    std::uint64_t evicted = 0;      // capacity_exceeded
    std::uint64_t pending = 0;      // in the queues now

    counters& operator+=(const counters& o);
  };

  using last_inbound = xconn::last_inbound;

  // files: how emitted file_refs are checked and described, and their download URLs signed. also_on_tick runs at
  // the end of every tick (the outbound side's timeouts share the timer).
  inbound_service(store& db, const config& cfg, channel_service& channels, connector_registry& connectors,
                  boost::asio::io_context& io, event_log& events, file_lookup files = {},
                  std::function<void()> also_on_tick = {},
                  now_fn now = {});
  ~inbound_service();
  inbound_service(const inbound_service&) = delete;
  inbound_service& operator=(const inbound_service&) = delete;

  // Reads the queues and msg_id windows back (after the channels); records of channels that are gone are
  // erased. Returns how many messages wait. Before any socket is served.
  std::size_t load();
  void start();  // the periodic tick
  void stop();

  // Adds writes of the plugin's own (a target cursor) to an emit's batch, or says why they are refused.
  using stage_fn = std::function<std::optional<emit_outcome>(write_batch& batch)>;

  // One plugin emit (any thread); done runs once, on the store's writer thread or right here. also_commit, when
  // set, adds its writes to the same commit: after the message (or alone, for a duplicate msg_id); a refusal
  // refuses the emit. A duplicate (its msg_id taken within delivery.expiry_s) is answered with the first message's
  // message_id, once that message is durable; the id is kept in inbound_ids, so a restart keeps the answer.
  void emit(const connector& from, std::string channel_id, std::string message_json,
            std::function<void(emit_outcome)> done, const stage_fn& also_commit = {});
  // xAgent's chat.message.ack for an inbound message (any thread).
  void ack(std::string_view channel_id, std::string_view message_id, ack_status status, bool retryable,
           std::string_view code);
  // The channel may be deliverable now (it was opened on a socket).
  void wake(std::string_view channel_id);
  // The channels ended: their queues and msg_id windows go.
  void drop_channels(const std::vector<std::string>& channel_ids);
  // Expiry, ack timeouts, route changes and redelivery for every channel with work (the timer runs it).
  void tick();

  counters stats(std::string_view plugin_id) const;
  std::optional<last_inbound> last_delivered(std::string_view channel_id) const;
  std::size_t pending(std::string_view channel_id) const;

 private:
  struct channel_state {
    explicit channel_state(inbox_policy p, std::string plugin) : inbox(p), plugin_id(std::move(plugin)) {}
    channel_inbox inbox;
    std::string plugin_id;
    std::weak_ptr<channel_route> sent_on;  // the route what is in flight went to
    bool pump_posted = false;
    bool awaiting_drain = false;  // sent_on holds deliveries (its outbox is full) and will say when it drained
  };

  // Some of the channels, and what their plugins' counters owe to them (stats() adds the shards up).
  struct shard {
    mutable std::mutex mutex;
    std::map<std::string, channel_state, std::less<>> channels;
    std::map<std::string, counters, std::less<>> counters_by_plugin;
    std::map<std::string, last_inbound, std::less<>> last;  // by channel, as kept in last_db
  };
  static constexpr std::size_t shard_count = 16;
  shard& shard_of(std::string_view channel_id) const;

  // The functions taking a shard run under its lock.
  channel_state& state_for(shard& sh, const std::string& channel_id, const std::string& plugin_id);
  void on_committed(const std::string& channel_id, std::uint64_t seq, const std::string& msg_id, std::string message_id,
                    std::error_code ec, const std::function<void(emit_outcome)>& done);
  // Whether msg_id, taken at judged_at, still names message_id (its commit did not fail meanwhile). Takes the lock.
  bool still_first(const std::string& channel_id, const std::string& msg_id, const std::string& message_id,
                   long long judged_at) const;
  void schedule_pump(shard& sh, const std::string& channel_id);
  void pump(const std::string& channel_id);
  // The socket of channel_id's route drained below a quarter of its budget: deliveries go on.
  void drained(const std::string& channel_id);
  // A queued message as the store keeps it, bodies included (the queue keeps none); nullopt when unreadable.
  std::optional<inbound_message> read_message(std::string_view channel_id, std::uint64_t seq) const;
  // Erases what left a queue and counts and logs why.
  void retire(shard& sh, channel_state& st, const std::string& channel_id, const std::vector<inbound_message>& gone,
              inbox_exit why, std::string_view code, write_batch& batch);
  void forget_expired_ids(shard& sh, long long now);
  long long now() const { return now_(); }

  store& db_;
  const config& cfg_;
  channel_service& channels_;
  connector_registry& connectors_;
  boost::asio::io_context& io_;
  event_log& events_;
  now_fn now_;
  file_lookup files_;
  inbox_policy policy_;
  mutable std::array<shard, shard_count> shards_;
  periodic_timer tick_timer_;
  std::atomic<bool> stopped_{false};
  long long next_id_sweep_ = 0;  // the tick's alone
  std::function<void()> also_on_tick_;
};

}  // namespace xconn
