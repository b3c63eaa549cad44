// The AIOS events of every plugin (, docs/protocol.md "Events"): channel status changes, plugin
// faults and loads, and one metadata record per message and attachment. The last kept_per_plugin of each plugin
// stay in memory for GET {base}/events; nothing of a message's content is ever in one.
//
// seq increases per plugin across restarts without a write per event: the store holds a reservation (the
// highest seq this or an earlier run may hand out), renewed a block ahead, and a new run starts past it.
#pragma once

#include "core/store/store.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

struct aios_event {
  std::string event_type;      // ChannelStatusChanged, AdapterFault, AdapterLoaded, message, attachment_meta, ...
  std::string session_id;      // the connector_channel_id; "" when no channel is concerned
  std::string message_id;      // the host's msg_… id; "" when no message is concerned
  std::string correlation_id;  // what caused it; "" means the message_id, else the thread's correlation_scope, else fresh
  boost::json::object payload; // metadata only
};

// What caused the events this thread records while the scope lives (the packet being handled, the auth session
// whose answer is being applied): their correlation_id when they name none. A nested scope hides the outer one until
// it ends. The id is borrowed: it must outlive the scope.
class correlation_scope {
 public:
  explicit correlation_scope(std::string_view cause);
  ~correlation_scope();
  correlation_scope(const correlation_scope&) = delete;
  correlation_scope& operator=(const correlation_scope&) = delete;
  // The innermost cause on this thread; "" outside every scope.
  static std::string_view current();

 private:
  std::string_view outer_;
};

// What a message record says of one file (attachment_meta).
struct attachment_summary {
  std::string file_ref;
  std::string mime_type;
  std::uint64_t byte_size = 0;
};

// The attachment_meta of IM file items ({"file_ref","mime_type","byte_size",...}).
std::vector<attachment_summary> attachments_of(const boost::json::array& file_items);

class event_log {
 public:
  static constexpr std::size_t kept_per_plugin = 1000;
  static constexpr std::uint64_t seq_block = 4096;
  static constexpr std::string_view database = "meta";
  using clock_fn = std::function<std::chrono::system_clock::time_point()>;
  // The plugin's target provider (the events' "target").
  using target_fn = std::function<std::string(std::string_view plugin_id)>;

  event_log(store& db, target_fn target_of, clock_fn now = std::chrono::system_clock::now);

  // Reserves a block of seqs for the plugin and waits for it to be durable (not on an I/O thread): called when a
  // plugin is loaded, so even its first events cannot repeat a seq after a crash.
  void open(const std::string& plugin_id);
  // Any thread. Wakes the waiters of that plugin. Every record gets a correlation_id: its own, its message's, the
  // thread's correlation_scope's, or a fresh cor_ id when nothing outside the host caused it (a load, a health change).
  void record(const std::string& plugin_id, aios_event e);
  // One message record and one attachment_meta per file. outcome: "" for an inbound message.
  void record_message(const std::string& plugin_id, std::string_view direction, std::string_view session_id,
                      std::string_view message_id, std::string_view correlation_id, std::uint64_t bytes,
                      const std::vector<attachment_summary>& files, std::string_view outcome = {});

  // An `error` event for a plugin call the host refused (kind: "approval_request"); session_id "" when no channel of
  // the plugin is concerned.
  void record_refusal(const std::string& plugin_id, std::string_view session_id, std::string_view kind,
                      std::string_view code);

  struct page {
    std::string events_json;  // a JSON array, oldest first
    std::uint64_t next_after = 0;
    std::size_t count = 0;
  };
  page read(std::string_view plugin_id, std::uint64_t after, std::size_t limit) const;

  // wake runs once (on a recording thread) as soon as the plugin has an event past after, or at once when it has
  // one already, or at shutdown. Returns a ticket for cancel (a waiter that timed out).
  std::uint64_t wait_past(const std::string& plugin_id, std::uint64_t after, std::function<void()> wake);
  void cancel(std::uint64_t ticket);
  // Wakes every waiter (shutdown).
  void wake_all();

 private:
  struct kept {
    std::uint64_t seq;
    std::string json;
  };
  struct waiter {
    std::uint64_t ticket;
    std::uint64_t after;
    std::function<void()> wake;
  };
  struct plugin_events {
    std::deque<kept> events;
    std::uint64_t last_seq = 0;  // handed out
    std::uint64_t reserved = 0;  // durable reservation (or queued)
    bool opened = false;
    std::vector<waiter> waiters;
  };
  plugin_events& events_of(const std::string& plugin_id);  // under the lock; reads the reservation once
  std::string reservation_key(std::string_view plugin_id) const;

  store& db_;
  target_fn target_of_;
  clock_fn now_;
  mutable std::mutex mutex_;
  std::map<std::string, plugin_events, std::less<>> plugins_;
  std::uint64_t next_ticket_ = 1;
};

}  // namespace xconn
