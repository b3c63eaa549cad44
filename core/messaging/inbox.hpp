// The inbound queue of one channel (IM v2 §7 and §9, IM v1 §7, docs/protocol.md "Inbound messages"): messages the
// plugin emitted, in order, until xAgent acknowledges them, they expire, or the cap evicts them.
//
// Pure state on an injected clock (unix ms passed in), no I/O and no locking: the inbound service owns one per
// channel behind its mutex, persists what this reports, and sends what it hands out.
#pragma once

#include <boost/json/array.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xconn {

// One inbound message as the host keeps it.
struct inbound_message {
  std::uint64_t seq = 0;      // order within the channel
  std::string message_id;     // the host's id on the wire: stable across redeliveries and restarts
  std::string msg_id;         // the plugin's deduplication id ("" when none)
  std::string text;
  std::string context_text;   // what the model reads instead of text ("" when none)
  std::string channel_key;    // the target conversation, <plugin>/<kind>/<id>
  std::string sender_id;
  std::string sender_name;
  std::string role;
  std::string modality;       // "", "text" or "voice"
  long long at = 0;           // platform time, unix ms (0: none)
  bool trigger = true;        // false: context only, rides with the next triggering message
  boost::json::array files;   // IM file items (file_ref, type, filename, ...); download_url is signed at delivery
  long long accepted_at = 0;  // unix ms the host took responsibility: expiry counts from here
  long long expires_at = 0;

  std::string to_record() const;  // what LMDB keeps (seq lives in the key)
  // with_body false: everything but text, context_text and files (see drop_body).
  static std::optional<inbound_message> from_record(std::uint64_t seq, std::string_view json, bool with_body = true);
  // What a queue keeps in memory of a durable message: its ids, order, expiry and where it came from, not its
  // bodies (text, context_text, files), which are read back from the store to send it. A backlog of large
  // messages thus costs the map's pages, which the kernel may drop, not the heap.
  void drop_body();
};

// How a message left the queue.
enum class inbox_exit { accepted, duplicate, rejected, expired, evicted };
std::string_view to_string(inbox_exit e);

struct inbox_policy {
  long long ack_timeout_ms = 10000;  // no ack this long after sending: the channel backs off
  long long retry_max_ms = 300000;   // the backoff doubles from ack_timeout_ms up to this
  std::size_t window = 32;           // triggering messages in flight at once
  std::size_t capacity = 1000;       // messages kept (context ones included); the oldest go first
};

enum class ack_status { accepted, duplicate, rejected };

class channel_inbox {
 public:
  explicit channel_inbox(inbox_policy policy) : policy_(policy) {}

  // ---- deduplication by the plugin's msg_id, within the expiry window ----
  // The message_id of the first message that took msg_id (what a duplicate is answered with; "" when a store of an
  // older build kept no id), or nullptr when msg_id is not taken now.
  const std::string* first_message_id(const std::string& msg_id, long long now) const;
  bool seen(const std::string& msg_id, long long now) const { return first_message_id(msg_id, now) != nullptr; }
  // message_id: the message that took msg_id ("" keeps the one already known).
  void remember(const std::string& msg_id, long long expires_at, const std::string& message_id = {});
  void forget(const std::string& msg_id) { seen_.erase(msg_id); }
  // Drops ids whose window has passed; returns them (the service erases their records).
  std::vector<std::string> forget_expired_ids(long long now);

  // ---- the queue ----
  std::uint64_t next_seq() { return ++last_seq_; }
  // Adds a message that is not durable yet (nothing is sent before mark_durable). Returns the messages evicted
  // to stay within capacity, oldest first.
  std::vector<inbound_message> add(inbound_message m);
  // A message read back from the store: durable already.
  void restore(inbound_message m);
  void mark_durable(std::uint64_t seq);
  // Its commit failed: it never happened.
  void drop(std::uint64_t seq);

  // Triggering messages to transmit now: durable, in order, while the window has room and the channel is not
  // backing off. Each is marked in flight. An expired candidate is removed instead (in expired).
  struct sendable {
    std::vector<std::uint64_t> send;
    std::vector<inbound_message> expired;
  };
  // At most `most` are taken: a delivery takes one at a time while its socket has room.
  sendable take_sendable(long long now, std::size_t most = static_cast<std::size_t>(-1));
  // A message take_sendable just handed out could not be sent (the socket is full): it waits again, first in line,
  // as if it had never been taken.
  void untake(std::uint64_t seq);
  const inbound_message* find(std::uint64_t seq) const;
  // The context messages that ride with a triggering message: those between it and the trigger before it.
  std::vector<const inbound_message*> context_of(std::uint64_t seq) const;
  // How many times the message was transmitted (1 on the first send).
  int attempts(std::uint64_t seq) const;

  // xAgent's answer, matched by message_id (a late ack of an earlier transmission still counts). Returns what
  // left the queue: the message and its context on accepted, duplicate or rejected-for-good; nothing when the
  // id is unknown (already gone) or the rejection is retryable (the channel backs off instead).
  std::vector<inbound_message> ack(std::string_view message_id, ack_status status, bool retryable, long long now);
  // Everything in flight goes back to waiting, resent from the head when a route comes back (no backoff).
  void route_lost();
  // The head in flight waited ack_timeout_ms: back off. Returns whether it did.
  bool check_timeouts(long long now);
  // Removes messages whose expiry passed, from the head (messages are accepted in order).
  std::vector<inbound_message> expire(long long now);
  // Everything, e.g. when the channel is deregistered.
  std::vector<inbound_message> clear();

  std::size_t size() const { return entries_.size(); }
  std::size_t in_flight() const { return in_flight_; }
  bool backing_off(long long now) const { return paused_until_ > now; }
  long long paused_until() const { return paused_until_; }
  std::size_t remembered_ids() const { return seen_.size(); }
  bool has_work() const { return !entries_.empty(); }

 private:
  struct entry {
    inbound_message message;
    bool durable = false;
    bool in_flight = false;
    long long sent_at = 0;
    int attempts = 0;
  };
  using entry_map = std::map<std::uint64_t, entry>;

  void back_off(long long now);
  // Removes the trigger at it and the context before it. Returns them, oldest first.
  std::vector<inbound_message> remove_group(entry_map::iterator it);
  inbound_message remove(entry_map::iterator it);

  inbox_policy policy_;
  entry_map entries_;
  std::unordered_map<std::string, std::uint64_t> by_message_id_;
  struct taken_id {
    long long until = 0;      // the end of its dedup window
    std::string message_id;   // the first message's
  };
  std::unordered_map<std::string, taken_id> seen_;  // by msg_id
  // The same ids in the order their windows were opened (nearly the order they end), so that a sweep only
  // looks at what has ended instead of every id remembered.
  std::deque<std::pair<long long, std::string>> seen_order_;
  std::uint64_t last_seq_ = 0;
  std::uint64_t sent_below_ = 0;  // take_sendable's walk starts at this seq (see there)
  std::size_t in_flight_ = 0;
  int failures_ = 0;  // consecutive back-offs since the last good ack
  long long paused_until_ = 0;
};

}  // namespace xconn
