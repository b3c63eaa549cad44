#include "core/messaging/delta_buffer.hpp"

#include <algorithm>

namespace xconn {

delta_buffer::delta_buffer(long long ttl_ms, std::size_t max_open_messages, std::size_t max_text_bytes)
    : ttl_ms_(ttl_ms), max_open_(std::max<std::size_t>(max_open_messages, 1)), max_text_bytes_(max_text_bytes) {}

delta_result delta_buffer::add(std::string_view message_id, std::int64_t sequence, std::string_view text,
                               long long now_ms) {
  if (completed_.contains(message_id)) return {.status = delta_status::completed};
  if (sequence < 1) return {.status = delta_status::invalid_sequence};

  auto it = open_.find(message_id);
  if (it == open_.end()) {
    if (sequence != 1) return {.status = delta_status::invalid_sequence};
    if (exceeds(0, text.size())) return {.status = delta_status::too_long};
    delta_result r{.status = delta_status::appended, .first = true};
    // Checked only now, so a refused delta never costs another message its place.
    if (open_.size() >= max_open_) r.evicted = evict_oldest();
    open_message m;
    m.text = text;
    m.ends.push_back(text.size());
    m.opened = next_opened_++;
    m.last_ms = now_ms;
    bytes_ += text.size();
    r.text = m.text;
    open_.emplace(std::string(message_id), std::move(m));
    return r;
  }

  auto& m = it->second;
  auto last = static_cast<std::int64_t>(m.ends.size());
  if (sequence <= last) {
    // A retransmission must carry what the first copy did; the slice is compared instead of keeping copies.
    auto index = static_cast<std::size_t>(sequence - 1);
    std::size_t begin = index == 0 ? 0 : m.ends[index - 1];
    if (std::string_view(m.text).substr(begin, m.ends[index] - begin) != text)
      return {.status = delta_status::invalid_sequence};
    m.last_ms = now_ms;
    return {.status = delta_status::repeat};
  }
  if (sequence > last + 1) return {.status = delta_status::invalid_sequence};
  if (exceeds(m.text.size(), text.size())) return {.status = delta_status::too_long};
  m.text += text;
  m.ends.push_back(m.text.size());
  m.last_ms = now_ms;
  bytes_ += text.size();
  return {.status = delta_status::appended, .text = m.text};
}

std::optional<std::string> delta_buffer::finish(std::string_view message_id) {
  std::optional<std::string> out;
  if (auto it = open_.find(message_id); it != open_.end()) {
    bytes_ -= it->second.text.size();
    out = std::move(it->second.text);
    open_.erase(it);
  }
  remember_completed(message_id);
  return out;
}

std::vector<std::string> delta_buffer::expire(long long now_ms) {
  std::vector<std::string> dropped;
  for (auto it = open_.begin(); it != open_.end();) {
    if (now_ms - it->second.last_ms >= ttl_ms_) {
      bytes_ -= it->second.text.size();
      dropped.push_back(it->first);
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
}

bool delta_buffer::exceeds(std::size_t have, std::size_t more) const {
  return max_text_bytes_ != 0 && have + more > max_text_bytes_;
}

std::string delta_buffer::evict_oldest() {
  // A linear scan: the map holds at most max_open_ entries and eviction only happens when a message opens.
  auto oldest = std::min_element(open_.begin(), open_.end(),
                                 [](const auto& a, const auto& b) { return a.second.opened < b.second.opened; });
  std::string id = oldest->first;
  bytes_ -= oldest->second.text.size();
  open_.erase(oldest);
  return id;
}

void delta_buffer::remember_completed(std::string_view message_id) {
  if (!completed_.emplace(message_id).second) return;
  completed_order_.emplace_back(message_id);
  while (completed_order_.size() > max_open_ * 4) {
    completed_.erase(completed_order_.front());
    completed_order_.pop_front();
  }
}

}  // namespace xconn
