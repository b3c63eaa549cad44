#include "core/messaging/send_limits.hpp"

#include <algorithm>

namespace xconn {

send_limits::send_limits(int max_length, int max_per_minute, length_unit unit)
    : max_length_(std::max(max_length, 0)), max_per_minute_(std::max(max_per_minute, 0)), unit_(unit) {}

void send_limits::set_limits(int max_length, int max_per_minute, length_unit unit) {
  max_length_ = std::max(max_length, 0);
  max_per_minute_ = std::max(max_per_minute, 0);
  unit_ = unit;
}

std::size_t send_limits::code_points(std::string_view utf8) { return length_in(length_unit::characters, utf8); }

bool send_limits::too_long(std::string_view text) const {
  if (max_length_ == 0) return false;
  // Bytes bound the length in every unit from above: a text this short cannot be over, and counting is skipped.
  if (text.size() <= static_cast<std::size_t>(max_length_)) return false;
  return length_in(unit_, text) > static_cast<std::size_t>(max_length_);
}

bool send_limits::admit(std::string_view conversation_key, long long now_ms) {
  if (max_per_minute_ == 0) return true;  // nothing to count, nothing to remember
  // Once a window (or when the clock stepped back): each sweep costs the conversations of about two windows, and
  // each of them was paid for by an admit, so the cost per admit stays constant.
  if (now_ms - last_sweep_ms_ >= window_ms || now_ms < last_sweep_ms_) sweep(now_ms);
  auto it = sends_.find(conversation_key);
  if (it == sends_.end()) it = sends_.emplace(std::string(conversation_key), std::vector<long long>{}).first;
  prune(it->second, now_ms);
  if (it->second.size() >= static_cast<std::size_t>(max_per_minute_)) return false;
  it->second.push_back(now_ms);
  return true;
}

void send_limits::forget(std::string_view conversation_key, long long now_ms) {
  auto it = sends_.find(conversation_key);
  if (it == sends_.end()) return;
  // An admit that already left the window no longer counts; there is nothing to give back.
  prune(it->second, now_ms);
  if (!it->second.empty()) it->second.pop_back();
  if (it->second.empty()) sends_.erase(it);
}

void send_limits::prune(std::vector<long long>& sends, long long now_ms) const {
  // Oldest first, so the expired ones are a prefix. A clock that steps back keeps sends counted longer, never less.
  auto keep = std::find_if(sends.begin(), sends.end(), [&](long long t) { return now_ms - t < window_ms; });
  sends.erase(sends.begin(), keep);
}

void send_limits::sweep(long long now_ms) {
  for (auto it = sends_.begin(); it != sends_.end();) {
    prune(it->second, now_ms);
    it = it->second.empty() ? sends_.erase(it) : std::next(it);
  }
  last_sweep_ms_ = now_ms;
}

}  // namespace xconn
