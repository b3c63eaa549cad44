#include "core/messaging/outbound_service.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
#include "core/base/log.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <utility>

namespace xconn {
namespace json = boost::json;

namespace {

constexpr long long sweep_period_ms = 60000;
constexpr std::size_t max_plugin_message = 200;

// What makes two finals "the same content" (IM v2 §9): the text and the file list.
std::string content_hash(const std::string& text, const json::array& files) {
  std::string material = text;
  for (const auto& f : files) {
    material.push_back('\0');
    if (auto* ref = f.as_object().if_contains("file_ref")) material += ref->as_string();
  }
  return sha256_hex(material);
}

json::object ack_payload(const std::string& message_id, std::string_view status) {
  return json::object{{"message_id", message_id}, {"status", status}};
}

json::object rejection(const std::string& message_id, std::string_view code, bool retryable, std::string_view message) {
  auto ack = ack_payload(message_id, "rejected");
  ack["code"] = code;
  ack["retryable"] = retryable;
  if (!message.empty()) ack["message"] = message;
  return ack;
}

// A plugin's own words go on the wire short and with every registered secret masked.
std::string plugin_message(std::string_view text) {
  return log::redact(text.substr(0, max_plugin_message));
}

}  // namespace

outbound_service::outbound_service(store& db, const config& cfg, channel_service& channels, event_log& events,
                                   last_inbound_fn last_delivered, file_lookup files, now_fn now)
    : db_(db),
      cfg_(cfg),
      channels_(channels),
      events_(events),
      last_delivered_(std::move(last_delivered)),
      now_(now ? std::move(now) : now_fn(unix_ms)),
      files_(std::move(files)) {}

outbound_service::~outbound_service() { db_.flush(); }

std::size_t outbound_service::load() {
  long long t = now_();
  write_batch stale;
  std::lock_guard lock(mutex_);
  db_.scan(completed_db, "", [&](std::string_view key, std::string_view value) {
    boost::system::error_code ec;
    auto v = json::parse(value, ec);
    const json::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
    auto* expires = o ? o->if_contains("expires_at") : nullptr;
    auto* hash = o ? o->if_contains("hash") : nullptr;
    if (!expires || !expires->is_int64() || expires->as_int64() <= t || !hash || !hash->is_string()) {
      stale.erase(std::string(completed_db), std::string(key));
      return true;
    }
    completed c;
    c.hash = hash->as_string();
    c.expires_at = expires->as_int64();
    if (auto* k = o->if_contains("external_key"); k && k->is_string()) c.external_key = k->as_string();
    if (auto* vf = o->if_contains("verified"); vf && vf->is_bool()) c.verified = vf->as_bool();
    completed_.emplace(std::string(key), std::move(c));
    return true;
  });
  if (!stale.ops.empty()) db_.write(std::move(stale));
  return completed_.size();
}

send_limits& outbound_service::limits_for(const connector& conn) {
  // The number first: a reload between the two reads is seen (as a newer number) on the next call. The manifest
  // is held here, as a reload may drop the generation it belongs to at any moment.
  auto generation = conn.generation();
  auto manifest = conn.manifest();
  int max_length = manifest->chat ? manifest->chat->max_length : 0;  // a build without chat: no limits
  int max_per_minute = manifest->chat ? manifest->chat->max_per_minute : 0;
  auto unit = manifest->chat ? manifest->chat->unit : length_unit::characters;
  auto it = limits_.find(conn.id());
  if (it == limits_.end()) {
    it = limits_.try_emplace(conn.id(), plugin_limits{generation, send_limits(max_length, max_per_minute, unit)}).first;
  } else if (it->second.generation != generation) {
    it->second.generation = generation;
    it->second.limits.set_limits(max_length, max_per_minute, unit);  // a reloaded build's chat
  }
  return it->second.limits;
}

delta_buffer& outbound_service::deltas_for(const std::string& channel_id) {
  auto it = deltas_.find(channel_id);
  if (it == deltas_.end())
    it = deltas_
             .try_emplace(channel_id, cfg_.delivery.delta_ttl_s * 1000LL,
                          static_cast<std::size_t>(cfg_.delivery.max_open_deltas_per_channel),
                          static_cast<std::size_t>(cfg_.server.max_frame_bytes))
             .first;
  return it->second;
}

// Under the lock: answers a repeat, a conflict or a refusal through done, or joins the same final already being
// sent (false); or claims the send for this call (true).
bool outbound_service::claim_send(connector& conn, final_message& m, const std::string& key, const std::string& hash,
                                  const std::string& conversation, long long t,
                                  std::function<void(json::object)>& done) {
  auto refuse = [](std::function<void(json::object)>& answer, json::object ack) {
    answer(std::move(ack));
    return false;
  };
  auto manifest_ptr = conn.manifest();
  const auto& manifest = *manifest_ptr;
  // Read before the lock (the channels have their own); applied after the repeat checks, as a repeat sends nothing.
  auto refused = channels_.credential_refusal(m.channel_id);
  std::lock_guard lock(mutex_);
  auto& count = counters_[conn.id()];
  ++count.finals;
  if (auto done_it = completed_.find(key); done_it != completed_.end() && done_it->second.expires_at > t) {
    if (done_it->second.hash != hash) {
      ++count.rejected;
      return refuse(done, rejection(m.message_id, "message_id_conflict", false,
                                    "this message_id was already sent with other content"));
    }
    ++count.duplicates;
    auto ack = ack_payload(m.message_id, "duplicate");
    if (!done_it->second.external_key.empty()) ack["external_key"] = done_it->second.external_key;
    ack["verified"] = done_it->second.verified;
    return refuse(done, std::move(ack));
  }
  if (auto run = running_.find(key); run != running_.end()) {
    if (run->second.hash != hash) {
      ++count.rejected;
      return refuse(done, rejection(m.message_id, "message_id_conflict", false,
                                    "this message_id is being sent with other content"));
    }
    run->second.waiters.push_back(std::move(done));  // answered with the first one's outcome
    return false;
  }
  // A reply goes out on the channel's credential: refused as its tools are while that credential is dead (not
  // retryable: a new sign-in is needed) or the target cannot be reached (retryable).
  if (refused) {
    ++count.rejected;
    return refuse(done, rejection(m.message_id, refused->code, refused->retryable, refused->message));
  }
  // A file a final names must be an upload of this channel; the plugin gets what the host knows of it.
  for (auto& f : m.files) {
    auto ref = f.as_object().at("file_ref").as_string();
    auto item = files_.item ? files_.item(conn.id(), m.channel_id, ref) : std::nullopt;
    if (!item) {
      ++count.rejected;
      return refuse(done, rejection(m.message_id, "file_ref_not_found", false,
                                    "no uploaded file " + std::string(ref.subview().substr(0, 64)) + " on this channel"));
    }
    f = std::move(*item);
  }
  auto& limits = limits_for(conn);
  if (limits.too_long(m.text) && !manifest.delivery.can_split) {
    ++count.rejected;
    return refuse(done, rejection(m.message_id, "message_too_long", false,
                                  "over the target's limit of " + std::to_string(manifest.chat->max_length) +
                                      " " + std::string(spoken(manifest.chat->unit))));
  }
  if (!limits.admit(conversation, t)) {
    ++count.rejected;
    return refuse(done, rejection(m.message_id, "rate_limited", true,
                                  "over " + std::to_string(manifest.chat->max_per_minute) + " replies a minute here"));
  }
  running_[key].hash = hash;
  deltas_for(m.channel_id).finish(m.message_id);  // the final is the whole content (IM v2 §5)
  return true;
}

void outbound_service::send_final(connector& conn, final_message m, std::function<void(json::object)> done) {
  auto manifest_ptr = conn.manifest();
  const auto& manifest = *manifest_ptr;
  std::string hash = content_hash(m.text, m.files);
  std::string key = m.channel_id + "/" + sha256_hex(m.message_id);
  auto last = last_delivered_(m.channel_id);
  std::string channel_key = last ? last->channel_key : conn.id() + "/group/default";
  std::string conversation = m.channel_id + "\n" + channel_key;
  long long t = now_();
  clear_typing(conn, m.channel_id);  // any final ends the activity, whatever becomes of it (IM v2 §8)
  // The outbound message record, once the final is accepted or refused (a duplicate is not a new one).
  auto attached = std::make_shared<std::vector<attachment_summary>>(attachments_of(m.files));
  done = [this, plugin_id = conn.id(), channel_id = m.channel_id, packet_id = m.packet_id, bytes = m.text.size(),
          attached, done = std::move(done)](json::object ack) {
    auto status = ack.at("status").as_string();
    if (status != "duplicate") {
      auto* code = ack.if_contains("code");
      std::string outcome = code && code->is_string() ? std::string(code->as_string()) : std::string(status);
      events_.record_message(plugin_id, "outbound", channel_id, std::string(ack.at("message_id").as_string()),
                             packet_id, bytes, *attached, outcome);
    }
    done(std::move(ack));
  };
  if (!claim_send(conn, m, key, hash, conversation, t, done)) return;
  *attached = attachments_of(m.files);  // now described by the store

  // Signed now, for the plugin to hand on (a webhook's receiver fetches it; docs/protocol.md "Files").
  if (files_.download_url)
    for (auto& f : m.files) {
      auto& item = f.as_object();
      item["download_url"] = files_.download_url(conn.id(), item.at("file_ref").as_string());
    }
  json::object reply{{"idempotency_key", m.message_id}, {"text", m.text}, {"files", m.files},
                     {"channel_key", channel_key}};
  if (manifest.chat && last)
    reply["reply_to"] = json::object{
        {"id", last->message_id}, {"sender_id", last->sender_id}, {"sender_name", last->sender_name}, {"role", last->role}};
  auto reply_json = json::serialize(reply);
  auto channel_id = m.channel_id;
  conn.send(
      channel_id, std::move(reply_json), channels_.strand_for(conn, channel_id),
      std::chrono::seconds(cfg_.delivery.send_timeout_s),
      [this, conn = conn.shared_from_this(), key, channel_id, message_id = m.message_id,
       conversation = std::move(conversation), done = std::move(done)](call_result r) mutable {
        finish_send(*conn, key, channel_id, std::move(message_id), std::move(conversation), std::move(r),
                    std::move(done));
      });
}

void outbound_service::finish_send(connector& conn, const std::string& key, const std::string& channel_id,
                                   std::string message_id, std::string conversation, call_result r,
                                   std::function<void(json::object)> done) {
  auto failed = [&](std::string_view code, bool retryable, std::string_view message) {
    {
      std::lock_guard lock(mutex_);
      ++counters_[conn.id()].rejected;
      if (retryable) limits_for(conn).forget(conversation, now_());  // a send that did not happen eats no quota
    }
    spdlog::warn("[plugin {}] channel {}: reply {} not sent ({})", conn.id(), channel_id, message_id, code);
    answer(key, rejection(message_id, code, retryable, message), std::move(done));
  };
  if (r.timed_out) return failed("send_timeout", true, "the target did not confirm in time");
  if (r.thrown) return failed("send_failed", true, "the plugin failed while sending");
  if (!r.ok) return failed(r.code, r.retryable, plugin_message(r.message));
  boost::system::error_code ec;
  auto v = json::parse(r.json, ec);
  const json::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
  auto* ok = o ? o->if_contains("ok") : nullptr;
  if (!ok || !ok->is_bool()) return failed("invalid_send_result", false, "the plugin's send result has no boolean ok");
  auto str = [&](const char* k) -> std::string {
    auto* x = o->if_contains(k);
    return x && x->is_string() ? std::string(x->as_string()) : std::string();
  };
  if (!ok->as_bool()) {
    auto* retry = o->if_contains("retryable");
    std::string code = str("error");
    if (code.empty() || code.size() > 64) code = "send_failed";
    return failed(code, retry && retry->is_bool() && retry->as_bool(), plugin_message(str("message")));
  }
  completed c;
  c.external_key = str("external_key").substr(0, 256);
  auto* verified = o->if_contains("verified");
  c.verified = verified && verified->is_bool() ? verified->as_bool() : true;
  c.expires_at = now_() + cfg_.delivery.completed_ids_s * 1000LL;
  {
    std::lock_guard lock(mutex_);
    auto run = running_.find(key);
    c.hash = run != running_.end() ? run->second.hash : std::string();
  }
  json::object record{{"hash", c.hash}, {"expires_at", c.expires_at}, {"verified", c.verified}};
  if (!c.external_key.empty()) record["external_key"] = c.external_key;
  auto ack = ack_payload(message_id, "accepted");
  if (!c.external_key.empty()) ack["external_key"] = c.external_key;
  ack["verified"] = c.verified;
  write_batch batch;
  batch.put(std::string(completed_db), key, json::serialize(record));
  // accepted goes out only once the fact that it was sent is durable: a repeat after a crash is a duplicate.
  db_.write(std::move(batch), [this, key, c = std::move(c), ack = std::move(ack), done = std::move(done),
                               plugin = conn.id()](std::error_code ec) mutable {
    if (ec) spdlog::error("sent reply record {} could not be saved: {}", key, ec.message());
    {
      std::lock_guard lock(mutex_);
      completed_[key] = std::move(c);
      ++counters_[plugin].accepted;
    }
    answer(key, std::move(ack), std::move(done));
  });
}

void outbound_service::answer(const std::string& key, json::object ack, std::function<void(json::object)> done) {
  std::vector<std::function<void(json::object)>> waiters;
  {
    std::lock_guard lock(mutex_);
    if (auto run = running_.find(key); run != running_.end()) {
      waiters = std::move(run->second.waiters);
      running_.erase(run);
    }
  }
  // Repeats that arrived while it ran: a sent message is a duplicate for them, a failure the same failure.
  json::object repeat = ack;
  if (repeat.at("status") == "accepted") repeat["status"] = "duplicate";
  for (auto& w : waiters) w(repeat);
  done(std::move(ack));
}

std::string outbound_service::delta(connector& conn, const std::string& channel_id, const std::string& message_id,
                                    std::int64_t sequence, std::string_view text) {
  std::string so_far;
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    ++counters_[conn.id()].deltas;
    auto r = deltas_for(channel_id).add(message_id, sequence, text, now_());
    if (r.evicted)
      spdlog::info("[plugin {}] channel {}: unfinished message {} dropped (too many open)", conn.id(), channel_id,
                   *r.evicted);
    switch (r.status) {
      case delta_status::appended: break;
      case delta_status::repeat:
      case delta_status::completed: return "";
      case delta_status::invalid_sequence: return "invalid_sequence";
      case delta_status::too_long: return "message_too_long";
    }
    first = r.first;
    if (conn.manifest()->delivery.can_edit) so_far = r.text;
  }
  if (first) clear_typing(conn, channel_id);  // visible text replaces the indicator (IM v2 §8)
  if (!conn.manifest()->delivery.can_edit) return "";
  // Kept here, not shown: a live edit uses the credential too (the final is refused or sent as a whole later).
  if (channels_.credential_refusal(channel_id)) return "";
  conn.update(
      channel_id, message_id, std::move(so_far), channels_.strand_for(conn, channel_id),
      std::chrono::seconds(cfg_.tools.timeout_s),
      [id = conn.id(), channel_id](call_result r) {
        if (!r.ok) spdlog::warn("[plugin {}] channel {}: live update failed ({})", id, channel_id, r.code);
      });
  return "";
}

void outbound_service::activity(connector& conn, const std::string& channel_id, const std::string& status,
                                const std::string& tool_name) {
  {
    std::lock_guard lock(mutex_);
    ++counters_[conn.id()].activities;
    if (!conn.manifest()->delivery.typing) return;  // degrades to a no-op (IM v2 §8)
    if (status == "idle") {
      if (!typing_.erase(channel_id)) return;
    } else {
      typing_[channel_id] = {conn.id(), now_() + activity_timeout_ms};
    }
  }
  call_activity(conn, channel_id, status, tool_name);
}

void outbound_service::clear_typing(connector& conn, const std::string& channel_id) {
  {
    std::lock_guard lock(mutex_);
    if (!typing_.erase(channel_id)) return;
  }
  call_activity(conn, channel_id, "idle", "");
}

void outbound_service::call_activity(connector& conn, const std::string& channel_id, std::string status,
                                     std::string tool_name) {
  if (channels_.credential_refusal(channel_id)) return;  // no indicator through a credential that cannot be used
  conn.activity(
      channel_id, std::move(status), std::move(tool_name), channels_.strand_for(conn, channel_id),
      std::chrono::seconds(cfg_.tools.timeout_s),
      [id = conn.id(), channel_id](call_result r) {
        // Activity never fails a message (IM v2 §8): a failure is only logged.
        if (!r.ok) spdlog::debug("[plugin {}] channel {}: activity not shown ({})", id, channel_id, r.code);
      });
}

void outbound_service::tick(connector_registry& connectors) {
  long long t = now_();
  std::vector<std::pair<std::string, std::string>> to_clear;  // plugin, channel
  std::vector<std::string> ended;                              // completed ids past their window
  {
    std::lock_guard lock(mutex_);
    for (auto it = typing_.begin(); it != typing_.end();) {
      if (it->second.clear_at <= t) {
        to_clear.emplace_back(it->second.plugin_id, it->first);
        it = typing_.erase(it);
      } else {
        ++it;
      }
    }
    if (t >= next_sweep_) {
      next_sweep_ = t + sweep_period_ms;
      for (auto& [channel, buffer] : deltas_)
        for (const auto& id : buffer.expire(t))
          spdlog::info("channel {}: unfinished message {} dropped after {} s without a final", channel, id,
                       cfg_.delivery.delta_ttl_s);
      for (auto it = completed_.begin(); it != completed_.end();) {
        if (it->second.expires_at <= t) {
          ended.push_back(it->first);
          it = completed_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  // A minute of ended ids at a high rate is tens of thousands.
  if (!ended.empty()) db_.erase_gradually(std::string(completed_db), std::move(ended));
  for (auto& [plugin, channel] : to_clear)
    if (auto conn = connectors.find(plugin)) call_activity(*conn, channel, "idle", "");
}

void outbound_service::drop_channels(const std::vector<std::string>& channel_ids) {
  write_batch batch;
  std::lock_guard lock(mutex_);
  for (const auto& id : channel_ids) {
    deltas_.erase(id);
    typing_.erase(id);
    auto prefix = id + "/";
    for (auto it = completed_.lower_bound(prefix); it != completed_.end() && it->first.starts_with(prefix);) {
      batch.erase(std::string(completed_db), it->first);
      it = completed_.erase(it);
    }
  }
  if (!batch.ops.empty()) db_.write(std::move(batch));
}

outbound_service::counters outbound_service::stats(std::string_view plugin_id) const {
  std::lock_guard lock(mutex_);
  auto it = counters_.find(plugin_id);
  return it == counters_.end() ? counters{} : it->second;
}

}  // namespace xconn
