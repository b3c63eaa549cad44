// The outbound chat.message.delta state of one channel (spec xagent_im_v2 §6, §9; docs/protocol.md "Outbound
// messages").
//
// Pure state, no I/O and no locking: the owner of the channel keeps one behind its own lock and injects the clock
// as unix ms, so ordering, expiry and eviction are testable without waiting. Bounded in both directions: at most
// max_open_messages unfinished messages of at most max_text_bytes each, and a short memory of finished ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

enum class delta_status {
  appended,          // new text; the result carries the text so far
  repeat,            // same message_id + sequence with the same text: an idempotent no-op
  invalid_sequence,  // sequence < 1, a gap, a first delta above 1, or a repeat with other text
  too_long,          // the text so far would exceed max_text_bytes; nothing changes
  completed,         // the final already arrived: a late delta is ignored
};

struct delta_result {
  delta_status status = delta_status::invalid_sequence;
  // The {} let results be built with designated initializers that name only what they carry.
  std::string text{};                    // with appended: the whole text so far, for a plugin that edits live
  bool first = false;                    // with appended: this delta opened the message (sequence 1)
  std::optional<std::string> evicted{};  // with appended: the message dropped to make room, for the log
};

class delta_buffer {
 public:
  // max_open_messages 0 is taken as 1 (the message being streamed must fit); max_text_bytes 0 = no limit.
  delta_buffer(long long ttl_ms, std::size_t max_open_messages, std::size_t max_text_bytes);

  // Checks in order: completed, sequence < 1, repeat / conflicting repeat, gap (or a first delta above 1),
  // too_long. appended and repeat mark the message live at now_ms (a retransmission shows the sender is alive).
  delta_result add(std::string_view message_id, std::int64_t sequence, std::string_view text, long long now_ms);

  // The final arrived: returns the buffered text (nullopt when nothing was buffered), drops the state and
  // remembers the id as completed, so late deltas give completed. Only the newest max_open_messages * 4
  // finished ids are remembered; the durable idempotency of finals lives elsewhere.
  std::optional<std::string> finish(std::string_view message_id);

  // Drops messages whose last delta is ttl_ms or more before now_ms. Returns their ids. They are not remembered
  // as completed: a late delta of one is invalid_sequence (or opens it anew with sequence 1).
  std::vector<std::string> expire(long long now_ms);

  std::size_t size() const { return open_.size(); }  // unfinished messages
  std::size_t bytes() const { return bytes_; }        // their buffered text

 private:
  struct open_message {
    std::string text;                // every sequence so far, concatenated
    std::vector<std::size_t> ends;   // ends[i]: where sequence i + 1 ends in text, to compare a repeat's slice
    std::uint64_t opened = 0;        // opening order, for eviction
    long long last_ms = 0;           // the last appended or repeated delta
  };

  bool exceeds(std::size_t have, std::size_t more) const;
  std::string evict_oldest();
  void remember_completed(std::string_view message_id);

  long long ttl_ms_;
  std::size_t max_open_;
  std::size_t max_text_bytes_;
  std::map<std::string, open_message, std::less<>> open_;
  std::uint64_t next_opened_ = 0;
  std::size_t bytes_ = 0;
  std::set<std::string, std::less<>> completed_;
  std::deque<std::string> completed_order_;  // oldest first, to forget beyond the bound
};

}  // namespace xconn
