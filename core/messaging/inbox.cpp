#include "core/messaging/inbox.hpp"

#include "core/wire/json_append.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace xconn {
namespace json = boost::json;

std::string_view to_string(inbox_exit e) {
  switch (e) {
    case inbox_exit::accepted: return "accepted";
    case inbox_exit::duplicate: return "duplicate";
    case inbox_exit::rejected: return "rejected";
    case inbox_exit::expired: return "expired";
    case inbox_exit::evicted: return "capacity_exceeded";
  }
  return "unknown";
}

namespace {

// In a record, the bodies come after every index field, from this key on (see to_record).
constexpr std::string_view bodies_start = R"(,"text":)";

}  // namespace

// Appended, not built as a DOM: one record per inbound message, written on the emit's path. The index fields come
// first and the bodies (text, context_text, files) last, so that a start reads a record's first bytes only.
std::string inbound_message::to_record() const {
  std::string out;
  out.reserve(160 + text.size() + context_text.size());
  out += R"({"message_id":)";
  append_json_string(out, message_id);
  out += R"(,"accepted_at":)";
  out += std::to_string(accepted_at);
  out += R"(,"expires_at":)";
  out += std::to_string(expires_at);
  auto put = [&](std::string_view key, const std::string& value) {
    if (!value.empty()) append_json_member(out, key, value);
  };
  put("msg_id", msg_id);
  put("channel_key", channel_key);
  put("sender_id", sender_id);
  put("sender_name", sender_name);
  put("role", role);
  put("modality", modality);
  if (at) {
    out += R"(,"at":)";
    out += std::to_string(at);
  }
  if (!trigger) out += R"(,"trigger":false)";
  out += bodies_start;
  append_json_string(out, text);
  put("context_text", context_text);
  if (!files.empty()) {
    out += R"(,"files":)";
    append_json_value(out, files);
  }
  out += '}';
  return out;
}

void inbound_message::drop_body() {
  std::string().swap(text);
  std::string().swap(context_text);
  boost::json::array().swap(files);
}

std::optional<inbound_message> inbound_message::from_record(std::uint64_t seq, std::string_view text_json,
                                                             bool with_body) {
  boost::system::error_code ec;
  json::value v;
  if (!with_body) {
    // The index fields alone: the record up to its bodies, closed. Every string before them is escaped, so the
    // first `,"text":` is the key. A record written before the bodies went last has no expires_at ahead of its
    // text: it is read whole.
    auto end = text_json.find(bodies_start);
    if (end != std::string_view::npos) {
      std::string head(text_json.substr(0, end));
      head += '}';
      boost::system::error_code head_ec;
      v = json::parse(head, head_ec);
      if (head_ec || !v.is_object() || !v.as_object().contains("expires_at")) v = nullptr;
    }
  }
  if (v.is_null()) v = json::parse(text_json, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto str = [&](const char* key) -> std::string {
    auto* x = o.if_contains(key);
    return x && x->is_string() ? std::string(x->as_string()) : std::string();
  };
  auto num = [&](const char* key) -> long long {
    auto* x = o.if_contains(key);
    return x && x->is_int64() ? x->as_int64() : 0;
  };
  inbound_message m;
  m.seq = seq;
  m.message_id = str("message_id");
  if (m.message_id.empty()) return std::nullopt;
  m.msg_id = str("msg_id");
  if (with_body) {
    m.text = str("text");
    m.context_text = str("context_text");
  }
  m.channel_key = str("channel_key");
  m.sender_id = str("sender_id");
  m.sender_name = str("sender_name");
  m.role = str("role");
  m.modality = str("modality");
  m.at = num("at");
  m.accepted_at = num("accepted_at");
  m.expires_at = num("expires_at");
  auto* trigger = o.if_contains("trigger");
  m.trigger = !(trigger && trigger->is_bool() && !trigger->as_bool());
  if (auto* files = o.if_contains("files"); with_body && files && files->is_array()) m.files = files->as_array();
  return m;
}

const std::string* channel_inbox::first_message_id(const std::string& msg_id, long long now) const {
  auto it = seen_.find(msg_id);
  return it != seen_.end() && it->second.until > now ? &it->second.message_id : nullptr;
}

void channel_inbox::remember(const std::string& msg_id, long long expires_at, const std::string& message_id) {
  auto& taken = seen_[msg_id];
  taken.until = std::max(taken.until, expires_at);
  if (!message_id.empty()) taken.message_id = message_id;
  seen_order_.emplace_back(expires_at, msg_id);
}

// Windows are opened with a fixed length, so they end about in the order they began; an entry that a later
// remember() extended, or that forget() dropped, is skipped. A window out of order (ids read back from the store
// in key order, a clock step) is forgotten once the ones before it are: late (at most one window), never early.
std::vector<std::string> channel_inbox::forget_expired_ids(long long now) {
  std::vector<std::string> gone;
  while (!seen_order_.empty() && seen_order_.front().first <= now) {
    auto it = seen_.find(seen_order_.front().second);
    if (it != seen_.end() && it->second.until <= now) {
      gone.push_back(it->first);
      seen_.erase(it);
    }
    seen_order_.pop_front();
  }
  return gone;
}

std::vector<inbound_message> channel_inbox::add(inbound_message m) {
  std::vector<inbound_message> evicted;
  while (!entries_.empty() && entries_.size() >= policy_.capacity) evicted.push_back(remove(entries_.begin()));
  last_seq_ = std::max(last_seq_, m.seq);
  by_message_id_[m.message_id] = m.seq;
  auto seq = m.seq;
  entries_.emplace(seq, entry{std::move(m)});
  return evicted;
}

void channel_inbox::restore(inbound_message m) {
  auto seq = m.seq;
  add(std::move(m));
  mark_durable(seq);
}

void channel_inbox::mark_durable(std::uint64_t seq) {
  if (auto it = entries_.find(seq); it != entries_.end()) it->second.durable = true;
}

void channel_inbox::drop(std::uint64_t seq) {
  if (auto it = entries_.find(seq); it != entries_.end()) remove(it);
}

channel_inbox::sendable channel_inbox::take_sendable(long long now, std::size_t most) {
  sendable out;
  if (paused_until_ > now) return out;
  auto it = entries_.lower_bound(sent_below_);
  for (; it != entries_.end() && in_flight_ < policy_.window && out.send.size() < most;) {
    auto& e = it->second;
    if (!e.durable) break;  // order: nothing overtakes a message still being committed
    if (e.message.expires_at <= now) {
      // Its context (older, so expired too) went before it in this same walk.
      auto next = std::next(it);
      out.expired.push_back(remove(it));
      it = next;
      continue;
    }
    if (e.message.trigger && !e.in_flight) {
      e.in_flight = true;
      e.sent_at = now;
      ++e.attempts;
      ++in_flight_;
      out.send.push_back(it->first);
    }
    ++it;
  }
  // Everything before `it` is in flight now, or context riding with a message in flight: the next walk (one
  // per ack) starts here instead of stepping over the whole window again.
  sent_below_ = it == entries_.end() ? last_seq_ + 1 : it->first;
  return out;
}

void channel_inbox::untake(std::uint64_t seq) {
  auto it = entries_.find(seq);
  if (it == entries_.end() || !it->second.in_flight) return;
  it->second.in_flight = false;
  it->second.sent_at = 0;
  --it->second.attempts;
  --in_flight_;
  sent_below_ = std::min(sent_below_, seq);
}

const inbound_message* channel_inbox::find(std::uint64_t seq) const {
  auto it = entries_.find(seq);
  return it == entries_.end() ? nullptr : &it->second.message;
}

std::vector<const inbound_message*> channel_inbox::context_of(std::uint64_t seq) const {
  std::vector<const inbound_message*> context;
  auto it = entries_.find(seq);
  while (it != entries_.begin()) {
    --it;
    if (it->second.message.trigger) break;
    context.push_back(&it->second.message);
  }
  std::reverse(context.begin(), context.end());
  return context;
}

int channel_inbox::attempts(std::uint64_t seq) const {
  auto it = entries_.find(seq);
  return it == entries_.end() ? 0 : it->second.attempts;
}

std::vector<inbound_message> channel_inbox::ack(std::string_view message_id, ack_status status, bool retryable,
                                                long long now) {
  auto id = by_message_id_.find(std::string(message_id));
  if (id == by_message_id_.end()) return {};
  auto it = entries_.find(id->second);
  if (it == entries_.end()) return {};
  if (status == ack_status::rejected && retryable) {
    // Only a rejection of what is in flight now backs off; a late one of an earlier transmission is stale.
    if (it->second.in_flight) back_off(now);
    return {};
  }
  if (status != ack_status::rejected) failures_ = 0;
  return remove_group(it);
}

void channel_inbox::route_lost() {
  for (auto& [seq, e] : entries_) e.in_flight = false;
  in_flight_ = 0;
  sent_below_ = 0;
}

bool channel_inbox::check_timeouts(long long now) {
  if (in_flight_ == 0) return false;
  for (const auto& [seq, e] : entries_) {
    if (e.in_flight && now - e.sent_at >= policy_.ack_timeout_ms) {
      back_off(now);
      return true;
    }
  }
  return false;
}

std::vector<inbound_message> channel_inbox::expire(long long now) {
  std::vector<inbound_message> gone;
  while (!entries_.empty() && entries_.begin()->second.message.expires_at <= now) gone.push_back(remove(entries_.begin()));
  return gone;
}

std::vector<inbound_message> channel_inbox::clear() {
  std::vector<inbound_message> gone;
  while (!entries_.empty()) gone.push_back(remove(entries_.begin()));
  seen_.clear();
  seen_order_.clear();
  sent_below_ = 0;
  return gone;
}

void channel_inbox::back_off(long long now) {
  ++failures_;
  long long delay = policy_.ack_timeout_ms;
  for (int i = 1; i < failures_ && delay < policy_.retry_max_ms; ++i) delay *= 2;
  paused_until_ = now + std::min(delay, policy_.retry_max_ms);
  route_lost();  // resend from the head once the pause ends
}

std::vector<inbound_message> channel_inbox::remove_group(entry_map::iterator it) {
  std::vector<inbound_message> group;
  while (it != entries_.begin()) {
    auto before = std::prev(it);
    if (before->second.message.trigger) break;
    group.push_back(remove(before));
  }
  std::reverse(group.begin(), group.end());
  group.push_back(remove(it));
  return group;
}

inbound_message channel_inbox::remove(entry_map::iterator it) {
  if (it->second.in_flight) --in_flight_;
  by_message_id_.erase(it->second.message.message_id);
  inbound_message m = std::move(it->second.message);
  entries_.erase(it);
  return m;
}

}  // namespace xconn
