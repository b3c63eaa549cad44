// Assistant output from xAgent to the plugin (IM v2 §5, §6, §8; docs/protocol.md "Outbound messages"): deltas go live
// to a plugin that edits and are buffered otherwise; each final calls the plugin's send once per message_id, and
// its outcome is kept (a sha256 of the content, never the text) in LMDB `outbound_done` so a repeat is
// answered `duplicate` or `message_id_conflict` across restarts; chat.activity becomes typing with a local
// timeout.
//
// Called on I/O threads; plugin calls run on the channel's strand of the plugin pool; one mutex guards the state.
#pragma once

#include "core/channels/channel_service.hpp"
#include "core/events/event_log.hpp"
#include "core/base/config.hpp"
#include "core/plugin_host/connector.hpp"
#include "core/files/file_store.hpp"
#include "core/messaging/delta_buffer.hpp"
#include "core/messaging/last_inbound.hpp"
#include "core/messaging/send_limits.hpp"
#include "core/store/store.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace xconn {

class outbound_service {
 public:
  static constexpr std::string_view completed_db = "outbound_done";
  using now_fn = std::function<long long()>;  // unix ms
  // Typing shown for a status that is not renewed is cleared after this long (IM v2 §8's local timeout).
  static constexpr long long activity_timeout_ms = 60000;

  struct counters {
    std::uint64_t finals = 0;      // final chat.messages received
    std::uint64_t accepted = 0;    // sent by the plugin
    std::uint64_t duplicates = 0;  // answered from the completed record
    std::uint64_t rejected = 0;    // any rejection (retryable or not)
    std::uint64_t deltas = 0;
    std::uint64_t activities = 0;
  };

  // One final chat.message as read from the wire.
  struct final_message {
    std::string channel_id;
    std::string message_id;
    std::string text;
    boost::json::array files;
    std::string packet_id;  // of the chat.message that carried it: the outbound record's correlation_id
  };

  // last_delivered: where a channel's reply goes (the inbound side knows). files: how a final's file_refs are
  // checked and described for the plugin.
  outbound_service(store& db, const config& cfg, channel_service& channels, event_log& events,
                   last_inbound_fn last_delivered,
                   file_lookup files = {}, now_fn now = {});
  ~outbound_service();
  outbound_service(const outbound_service&) = delete;
  outbound_service& operator=(const outbound_service&) = delete;

  std::size_t load();  // the completed ids still inside their window

  // The final: done gets the chat.message.ack payload, exactly once, on any thread.
  void send_final(connector& conn, final_message m, std::function<void(boost::json::object)> done);
  // A delta: "" when taken (or an idempotent repeat), else the error code to answer with.
  std::string delta(connector& conn, const std::string& channel_id, const std::string& message_id,
                    std::int64_t sequence, std::string_view text);
  // chat.activity, already validated.
  void activity(connector& conn, const std::string& channel_id, const std::string& status,
                const std::string& tool_name);
  // Delta TTLs, typing timeouts, completed ids past their window (the inbound tick drives it).
  void tick(connector_registry& connectors);
  void drop_channels(const std::vector<std::string>& channel_ids);

  counters stats(std::string_view plugin_id) const;

 private:
  bool claim_send(connector& conn, final_message& m, const std::string& key, const std::string& hash,
                  const std::string& conversation, long long t, std::function<void(boost::json::object)>& done);
  struct completed {
    std::string hash;
    long long expires_at = 0;
    std::string external_key;
    bool verified = false;
  };
  struct running {
    std::string hash;
    std::vector<std::function<void(boost::json::object)>> waiters;
  };
  struct typing {
    std::string plugin_id;
    long long clear_at = 0;
  };

  void finish_send(connector& conn, const std::string& key, const std::string& channel_id, std::string message_id,
                   std::string conversation, call_result r, std::function<void(boost::json::object)> done);
  void answer(const std::string& key, boost::json::object ack, std::function<void(boost::json::object)> done);
  // Tells a typing plugin to clear its indicator, when one is shown.
  void clear_typing(connector& conn, const std::string& channel_id);
  void call_activity(connector& conn, const std::string& channel_id, std::string status, std::string tool_name);
  send_limits& limits_for(const connector& conn);  // under the lock
  delta_buffer& deltas_for(const std::string& channel_id);  // under the lock

  store& db_;
  const config& cfg_;
  channel_service& channels_;
  event_log& events_;
  last_inbound_fn last_delivered_;
  now_fn now_;
  file_lookup files_;
  mutable std::mutex mutex_;
  std::map<std::string, completed, std::less<>> completed_;  // by channel/sha256(message_id)
  std::map<std::string, running, std::less<>> running_;
  std::map<std::string, delta_buffer, std::less<>> deltas_;  // by channel
  std::map<std::string, typing, std::less<>> typing_;        // by channel, while shown
  struct plugin_limits {
    std::uint64_t generation;  // the build whose chat they follow
    send_limits limits;
  };
  std::map<std::string, plugin_limits, std::less<>> limits_;  // by plugin
  std::map<std::string, counters, std::less<>> counters_;    // by plugin
  long long next_sweep_ = 0;
};

}  // namespace xconn
