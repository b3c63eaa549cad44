#include "core/events/event_log.hpp"

#include "core/base/ids.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <ctime>

namespace xconn {
namespace json = boost::json;

namespace {

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char out[64];
  std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms % 1000));
  return out;
}

std::uint64_t read_u64(const std::optional<std::string>& text) {
  std::uint64_t v = 0;
  if (text) std::from_chars(text->data(), text->data() + text->size(), v);
  return v;
}

thread_local std::string_view current_cause;

}  // namespace

correlation_scope::correlation_scope(std::string_view cause) : outer_(current_cause) { current_cause = cause; }
correlation_scope::~correlation_scope() { current_cause = outer_; }
std::string_view correlation_scope::current() { return current_cause; }

std::vector<attachment_summary> attachments_of(const json::array& file_items) {
  std::vector<attachment_summary> out;
  for (const auto& f : file_items) {
    const auto* o = f.if_object();
    if (!o) continue;
    attachment_summary a;
    if (auto* ref = o->if_contains("file_ref"); ref && ref->is_string()) a.file_ref = ref->as_string();
    if (auto* mime = o->if_contains("mime_type"); mime && mime->is_string()) a.mime_type = mime->as_string();
    if (auto* size = o->if_contains("byte_size"); size && size->is_number()) a.byte_size = size->to_number<std::uint64_t>();
    out.push_back(std::move(a));
  }
  return out;
}

event_log::event_log(store& db, target_fn target_of, clock_fn now)
    : db_(db), target_of_(std::move(target_of)), now_(std::move(now)) {}

std::string event_log::reservation_key(std::string_view plugin_id) const {
  return "event_seq/" + std::string(plugin_id);
}

event_log::plugin_events& event_log::events_of(const std::string& plugin_id) {
  auto it = plugins_.find(plugin_id);
  if (it != plugins_.end()) return it->second;
  auto& p = plugins_[plugin_id];
  p.last_seq = p.reserved = read_u64(db_.get(database, reservation_key(plugin_id)));
  return p;
}

void event_log::open(const std::string& plugin_id) {
  std::uint64_t reserve = 0;
  {
    std::lock_guard lock(mutex_);
    auto& p = events_of(plugin_id);
    if (p.opened) return;
    p.opened = true;
    reserve = p.reserved = p.last_seq + seq_block;
  }
  write_batch batch;
  batch.put(std::string(database), reservation_key(plugin_id), std::to_string(reserve));
  if (auto ec = db_.write_sync(std::move(batch)))
    spdlog::error("[plugin {}] event seq reservation not stored: {}", plugin_id, ec.message());
}

void event_log::record(const std::string& plugin_id, aios_event e) {
  json::object o;
  o["event_type"] = e.event_type;
  o["timestamp"] = iso8601_utc(now_());
  o["channel_type"] = "dialog";
  o["target"] = target_of_ ? target_of_(plugin_id) : plugin_id;
  if (!e.session_id.empty()) o["session_id"] = e.session_id;
  if (!e.message_id.empty()) o["message_id"] = e.message_id;
  if (!e.correlation_id.empty()) o["correlation_id"] = e.correlation_id;
  else if (!e.message_id.empty()) o["correlation_id"] = e.message_id;
  else if (auto cause = correlation_scope::current(); !cause.empty()) o["correlation_id"] = cause;
  else o["correlation_id"] = unique_id("cor_");
  o["payload"] = std::move(e.payload);
  // Serialized outside the lock; the seq goes in front under it.
  std::string body = json::serialize(o);

  std::vector<waiter> woken;
  std::optional<std::uint64_t> renew;
  {
    std::lock_guard lock(mutex_);
    auto& p = events_of(plugin_id);
    auto seq = ++p.last_seq;
    // Renewed half a block early, so the reservation is durable long before this run reaches it.
    if (seq + seq_block / 2 > p.reserved) renew = p.reserved = seq + seq_block;
    std::string text = "{\"seq\":" + std::to_string(seq) + ",";
    text.append(body, 1);
    p.events.push_back({seq, std::move(text)});
    if (p.events.size() > kept_per_plugin) p.events.pop_front();
    auto past = std::stable_partition(p.waiters.begin(), p.waiters.end(),
                                      [seq](const waiter& w) { return w.after >= seq; });
    std::move(past, p.waiters.end(), std::back_inserter(woken));
    p.waiters.erase(past, p.waiters.end());
  }
  if (renew) {
    write_batch batch;
    batch.put(std::string(database), reservation_key(plugin_id), std::to_string(*renew));
    db_.write(std::move(batch), [plugin_id](std::error_code ec) {
      if (ec) spdlog::error("[plugin {}] event seq reservation not stored: {}", plugin_id, ec.message());
    });
  }
  for (auto& w : woken) w.wake();
}

void event_log::record_message(const std::string& plugin_id, std::string_view direction, std::string_view session_id,
                               std::string_view message_id, std::string_view correlation_id, std::uint64_t bytes,
                               const std::vector<attachment_summary>& files, std::string_view outcome) {
  json::object payload{{"direction", direction}, {"bytes", bytes}, {"files", files.size()}};
  if (!outcome.empty()) payload["outcome"] = outcome;
  auto base = [&](std::string_view type, json::object body) {
    return aios_event{std::string(type), std::string(session_id), std::string(message_id),
                      std::string(correlation_id), std::move(body)};
  };
  record(plugin_id, base("message", std::move(payload)));
  for (const auto& f : files)
    record(plugin_id, base("attachment_meta", json::object{{"direction", direction},
                                                             {"file_ref", f.file_ref},
                                                             {"mime_type", f.mime_type},
                                                             {"byte_size", f.byte_size}}));
}

void event_log::record_refusal(const std::string& plugin_id, std::string_view session_id, std::string_view kind,
                               std::string_view code) {
  record(plugin_id, {"error", std::string(session_id), "", "",
                     json::object{{"direction", "inbound"}, {"kind", kind}, {"code", code}}});
}

event_log::page event_log::read(std::string_view plugin_id, std::uint64_t after, std::size_t limit) const {
  page out;
  out.next_after = after;
  out.events_json = "[";
  std::lock_guard lock(mutex_);
  auto it = plugins_.find(plugin_id);
  if (it != plugins_.end()) {
    for (const auto& e : it->second.events) {
      if (e.seq <= after) continue;
      if (out.count == limit) break;
      if (out.count++ > 0) out.events_json += ',';
      out.events_json += e.json;
      out.next_after = e.seq;
    }
  }
  out.events_json += ']';
  return out;
}

std::uint64_t event_log::wait_past(const std::string& plugin_id, std::uint64_t after, std::function<void()> wake) {
  std::uint64_t ticket = 0;
  {
    std::lock_guard lock(mutex_);
    auto& p = events_of(plugin_id);
    if (p.events.empty() || p.events.back().seq <= after) {
      ticket = next_ticket_++;
      p.waiters.push_back({ticket, after, std::move(wake)});
      return ticket;
    }
  }
  wake();
  return ticket;
}

void event_log::cancel(std::uint64_t ticket) {
  std::lock_guard lock(mutex_);
  for (auto& [id, p] : plugins_)
    std::erase_if(p.waiters, [ticket](const waiter& w) { return w.ticket == ticket; });
}

void event_log::wake_all() {
  std::vector<waiter> woken;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, p] : plugins_) {
      for (auto& w : p.waiters) woken.push_back(std::move(w));
      p.waiters.clear();
    }
  }
  for (auto& w : woken) w.wake();
}

}  // namespace xconn
