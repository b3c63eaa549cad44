// Seed 002's chat limits for the outbound finals of one plugin: chat.max_length (in the unit the plugin declares,
// chat.length_unit) and chat.max_per_minute (docs/protocol.md "Outbound messages": message_too_long, rate_limited).
//
// Pure state, no I/O and no locking: the owner keeps one per plugin behind its own lock and injects the clock as
// unix ms, so the window is testable without waiting.
#pragma once

#include "core/plugin_host/length_unit.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

class send_limits {
 public:
  static constexpr long long window_ms = 60'000;

  // 0 (or less) = no limit, for either: a max_per_minute of 0 is a plugin that paces its target itself.
  send_limits(int max_length, int max_per_minute, length_unit unit = length_unit::characters);
  // New limits (a reloaded build's chat); the sends already counted keep counting.
  void set_limits(int max_length, int max_per_minute, length_unit unit = length_unit::characters);

  // Lengths in seed 002's limits are Unicode code points: the bytes that are not UTF-8 continuation bytes
  // (10xxxxxx). Invalid UTF-8 is not rejected here; its non-continuation bytes count one each.
  static std::size_t code_points(std::string_view utf8);
  // Over max_length, counted in the plugin's unit.
  bool too_long(std::string_view text) const;

  // Sliding 60 s window per conversation (the caller builds the key from channel id and channel_key): a send at t
  // counts while now_ms - t < window_ms. Under max_per_minute: records the send and returns true; else returns
  // false (rate_limited) and records nothing.
  bool admit(std::string_view conversation_key, long long now_ms);
  // Undoes the most recent admit of the conversation, so a send that failed retryably does not eat quota.
  void forget(std::string_view conversation_key, long long now_ms);

  std::size_t size() const { return sends_.size(); }  // conversations remembered

 private:
  void prune(std::vector<long long>& sends, long long now_ms) const;
  void sweep(long long now_ms);

  int max_length_;
  int max_per_minute_;
  length_unit unit_;
  // Admit times per conversation, oldest first; at most max_per_minute_ each, so a vector is cheap to shift.
  std::map<std::string, std::vector<long long>, std::less<>> sends_;
  long long last_sweep_ms_ = 0;
};

}  // namespace xconn
