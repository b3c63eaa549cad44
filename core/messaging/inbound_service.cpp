#include "core/messaging/inbound_service.hpp"

#include "core/messaging/budgeted_route.hpp"
#include "core/messaging/emit_message.hpp"
#include "core/base/ids.hpp"
#include "core/base/log_interval.hpp"
#include "core/messaging/inbound_packets.hpp"

#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace xconn {
namespace json = boost::json;

namespace {

// A flood drops or expires messages by the thousand: a log line per 10 s with a count, not one per message.
log_interval expiries_logged(std::chrono::seconds(10));
log_interval evictions_logged(std::chrono::seconds(10));

constexpr std::string_view im_v2 = "xagent.im.v2";
constexpr std::string_view im_v1 = "xagent.im.v1";
constexpr long long id_sweep_period_ms = 60000;

// <channel>/<seq as 16 hex digits>: one channel's messages are adjacent and in order.
std::string message_key(std::string_view channel_id, std::uint64_t seq) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, seq);
  return std::string(channel_id) + "/" + hex;
}

std::string id_key(std::string_view channel_id, std::string_view msg_id) {
  return std::string(channel_id) + "/" + std::string(msg_id);
}

// The file_refs an emit names (files[].file_ref), read leniently: a message refused as malformed may still name
// files its plugin stored for it.
std::vector<std::string> file_refs_named(std::string_view message_json) {
  constexpr std::size_t most = 64;
  std::vector<std::string> refs;
  boost::system::error_code ec;
  auto v = json::parse(message_json, ec);
  const auto* files = !ec && v.is_object() ? v.as_object().if_contains("files") : nullptr;
  if (!files || !files->is_array()) return refs;
  for (const auto& f : files->as_array()) {
    const auto* ref = f.is_object() ? f.as_object().if_contains("file_ref") : nullptr;
    if (ref && ref->is_string() && refs.size() < most) refs.emplace_back(ref->as_string());
  }
  return refs;
}

bool has(const std::vector<std::string>& profiles, std::string_view p) {
  return std::find(profiles.begin(), profiles.end(), p) != profiles.end();
}

// What a message.push says of the connector besides the message: label, skill, IM v1 tools, the reply tool.
void describe_connector(const connector& conn, inbound_wire& wire) {
  auto manifest = conn.manifest();
  const auto& card = manifest->card;
  if (auto* supports = card.if_contains("supports"); supports && supports->is_object())
    if (auto* targets = supports->as_object().if_contains("targets"); targets && targets->is_array())
      for (const auto& t : targets->as_array())
        if (auto* l = t.as_object().if_contains("label"); l && l->is_string()) {
          wire.label = l->as_string();
          break;
        }
  wire.skill = skill_name_for(manifest->card_id);
  if (auto* tools = card.if_contains("tools"); tools && tools->is_array())
    for (const auto& t : tools->as_array()) {
      const auto& tool = t.as_object();
      if (auto* p = tool.if_contains("profile"); !p || *p != "xagent.im.v1") continue;
      std::string id(tool.at("tool_id").as_string());
      auto options = manifest->tools.find(id);
      if (wire.reply_tool.empty() && options != manifest->tools.end() && options->second.side_effect) wire.reply_tool = id;
      wire.v1_tools.push_back(std::move(id));
    }
}

}  // namespace

inbound_service::inbound_service(store& db, const config& cfg, channel_service& channels,
                                 connector_registry& connectors, boost::asio::io_context& io, event_log& events,
                                 file_lookup files,
                                 std::function<void()> also_on_tick, now_fn now)
    : db_(db),
      cfg_(cfg),
      channels_(channels),
      connectors_(connectors),
      io_(io),
      events_(events),
      now_(now ? std::move(now) : now_fn(unix_ms)),
      files_(std::move(files)),
      policy_{cfg.delivery.ack_timeout_s * 1000LL, cfg.delivery.retry_max_s * 1000LL,
              static_cast<std::size_t>(cfg.delivery.window),
              static_cast<std::size_t>(cfg.delivery.max_pending_per_channel)},
      tick_timer_(io.get_executor(), tick_period, [this] { tick(); }),
      also_on_tick_(std::move(also_on_tick)) {}

inbound_service::~inbound_service() {
  stop();
  db_.flush();  // no commit may still be on its way back to this object
}

std::size_t inbound_service::load() {
  std::size_t n = 0;
  write_batch orphans;
  db_.scan(messages_db, "", [&](std::string_view key, std::string_view value) {
    auto slash = key.rfind('/');
    std::string channel_id(key.substr(0, slash == std::string_view::npos ? 0 : slash));
    auto route = channel_id.empty() ? std::nullopt : channels_.route_of(channel_id);
    std::uint64_t seq = 0;
    auto hex = key.substr(slash + 1);
    bool seq_ok = slash != std::string_view::npos && hex.size() == 16 &&
                  std::sscanf(std::string(hex).c_str(), "%16" SCNx64, &seq) == 1;
    // The index only: the bodies stay in the map until the message is sent.
    auto m = seq_ok ? inbound_message::from_record(seq, value, false) : std::nullopt;
    if (!route || !m) {
      orphans.erase(std::string(messages_db), std::string(key));
      return true;
    }
    auto& sh = shard_of(channel_id);
    std::lock_guard lock(sh.mutex);
    state_for(sh, channel_id, route->plugin_id).inbox.restore(std::move(*m));
    ++sh.counters_by_plugin[route->plugin_id].pending;
    ++n;
    return true;
  });
  db_.scan(ids_db, "", [&](std::string_view key, std::string_view value) {
    auto slash = key.find('/');
    std::string channel_id(key.substr(0, slash == std::string_view::npos ? 0 : slash));
    auto route = channel_id.empty() ? std::nullopt : channels_.route_of(channel_id);
    if (!route) {
      orphans.erase(std::string(ids_db), std::string(key));
      return true;
    }
    auto& sh = shard_of(channel_id);
    std::lock_guard lock(sh.mutex);
    state_for(sh, channel_id, route->plugin_id)
        .inbox.remember(std::string(key.substr(slash + 1)), std::atoll(std::string(value).c_str()));
    return true;
  });
  db_.scan(last_db, "", [&](std::string_view key, std::string_view value) {
    auto last = channels_.route_of(key) ? last_inbound_from_record(value) : std::nullopt;
    if (last) {
      auto& sh = shard_of(key);
      std::lock_guard lock(sh.mutex);
      sh.last.emplace(std::string(key), std::move(*last));
    }
    else orphans.erase(std::string(last_db), std::string(key));
    return true;
  });
  if (!orphans.ops.empty()) {
    spdlog::info("{} inbound records of channels that no longer exist erased", orphans.ops.size());
    db_.write(std::move(orphans));
  }
  return n;
}

void inbound_service::start() { tick_timer_.start(); }

void inbound_service::stop() {
  stopped_ = true;
  tick_timer_.stop();
}

inbound_service::counters& inbound_service::counters::operator+=(const counters& o) {
  accepted += o.accepted;
  duplicates += o.duplicates;
  refused += o.refused;
  sent += o.sent;
  redelivered += o.redelivered;
  delivered += o.delivered;
  rejected += o.rejected;
  expired += o.expired;
  evicted += o.evicted;
  pending += o.pending;
  return *this;
}

inbound_service::shard& inbound_service::shard_of(std::string_view channel_id) const {
  return shards_[std::hash<std::string_view>{}(channel_id) % shard_count];
}

inbound_service::channel_state& inbound_service::state_for(shard& sh, const std::string& channel_id,
                                                           const std::string& plugin_id) {
  auto it = sh.channels.find(channel_id);
  if (it == sh.channels.end()) it = sh.channels.try_emplace(channel_id, policy_, plugin_id).first;
  return it->second;
}

void inbound_service::emit(const connector& from, std::string channel_id, std::string message_json,
                           std::function<void(emit_outcome)> done, const stage_fn& also_commit) {
  // Files stored for a message that is refused would wait for files.ttl_s with nothing naming them: they go now.
  auto discard_files = [this, plugin_id = from.id(), channel_id](const std::vector<std::string>& refs) {
    if (files_.discard)
      for (const auto& ref : refs) files_.discard(plugin_id, channel_id, ref);
  };
  auto& sh = shard_of(channel_id);
  auto refuse = [&](std::string code, std::string why, const std::vector<std::string>& refs) {
    {
      std::lock_guard lock(sh.mutex);
      ++sh.counters_by_plugin[from.id()].refused;
    }
    discard_files(refs);
    spdlog::warn("[plugin {}] emit to {} refused: {} ({})", from.id(), channel_id, code, why);
    events_.record(from.id(), {"error", "", "", "", json::object{{"direction", "inbound"}, {"code", code}}});
    done({false, "", false, std::move(code), std::move(why)});
  };
  auto parsed = parse_emit(message_json, *from.manifest());
  // A malformed message may still name files its plugin stored for it: read leniently, and only then.
  if (!parsed) return refuse("invalid_message", parsed.error(), file_refs_named(message_json));
  inbound_message m = std::move(*parsed);
  std::vector<std::string> refs;  // empty for most messages: nothing allocated
  for (const auto& f : m.files) refs.emplace_back(f.as_object().at("file_ref").as_string());
  auto route = channels_.route_of(channel_id);
  if (!route || route->plugin_id != from.id())
    return refuse("channel_not_found", "no channel " + channel_id.substr(0, 64) + " of this plugin", refs);

  for (auto& f : m.files) {
    auto ref = f.as_object().at("file_ref").as_string();
    auto item = files_.item ? files_.item(from.id(), channel_id, ref) : std::nullopt;
    if (!item) return refuse("invalid_message", "files: " + std::string(ref) + " is not a file of this channel", refs);
    f = std::move(*item);
  }
  long long t = now();
  std::uint64_t bytes = m.text.size();
  auto attached = attachments_of(m.files);
  std::lock_guard lock(sh.mutex);
  auto& st = state_for(sh, channel_id, from.id());
  auto& count = sh.counters_by_plugin[from.id()];
  if (!m.msg_id.empty() && st.inbox.seen(m.msg_id, t)) {
    ++count.duplicates;
    if (!also_commit) return done({true, "", true, "", ""});
    write_batch state;
    if (auto refused = also_commit(state)) return done(std::move(*refused));
    return db_.write(std::move(state), [done = std::move(done)](std::error_code ec) {
      if (ec) return done({false, "", false, "store_failed", "the host could not store the write"});
      done({true, "", true, "", ""});
    });
  }
  write_batch batch;
  if (also_commit) {
    if (auto refused = also_commit(batch)) {
      ++count.refused;
      discard_files(refs);
      return done(std::move(*refused));
    }
  }
  m.seq = st.inbox.next_seq();
  m.message_id = unique_id("msg_");
  m.accepted_at = t;
  m.expires_at = t + cfg_.delivery.expiry_s * 1000LL;
  batch.put(std::string(messages_db), message_key(channel_id, m.seq), m.to_record());
  m.drop_body();  // the record in the batch has it; a delivery reads it back from the store
  if (!m.msg_id.empty()) {
    st.inbox.remember(m.msg_id, m.expires_at);
    batch.put(std::string(ids_db), id_key(channel_id, m.msg_id), std::to_string(m.expires_at));
  }
  auto seq = m.seq;
  auto msg_id = m.msg_id;
  auto message_id = m.message_id;
  auto evicted = st.inbox.add(std::move(m));
  ++count.accepted;
  ++count.pending;
  retire(sh, st, channel_id, evicted, inbox_exit::evicted, "capacity_exceeded", batch);
  // Queued under the lock, so commits (and deliveries) keep the order of the emits.
  db_.write(std::move(batch), [this, plugin_id = from.id(), channel_id, seq, msg_id, message_id, bytes,
                                attached = std::move(attached), done = std::move(done),
                                discard_files = std::move(discard_files),
                                refs = std::move(refs)](std::error_code ec) mutable {
    if (!ec) events_.record_message(plugin_id, "inbound", channel_id, message_id, message_id, bytes, attached);
    if (ec) discard_files(refs);
    on_committed(channel_id, seq, msg_id, std::move(message_id), ec, done);
  });
}

void inbound_service::on_committed(const std::string& channel_id, std::uint64_t seq, const std::string& msg_id,
                                   std::string message_id, std::error_code ec,
                                   const std::function<void(emit_outcome)>& done) {
  {
    auto& sh = shard_of(channel_id);
    std::lock_guard lock(sh.mutex);
    auto it = sh.channels.find(channel_id);
    if (it != sh.channels.end()) {
      auto& st = it->second;
      auto& count = sh.counters_by_plugin[st.plugin_id];
      if (ec) {
        if (st.inbox.find(seq)) --count.pending;
        st.inbox.drop(seq);
        if (!msg_id.empty()) st.inbox.forget(msg_id);
        ++count.refused;
      } else {
        st.inbox.mark_durable(seq);
        schedule_pump(sh, channel_id);
      }
    }
  }
  if (ec) {
    spdlog::error("inbound message for {} could not be stored: {}", channel_id, ec.message());
    return done({false, "", false, "store_failed", "the host could not store the message"});
  }
  done({true, std::move(message_id), false, "", ""});
}

void inbound_service::schedule_pump(shard& sh, const std::string& channel_id) {
  auto it = sh.channels.find(channel_id);
  if (it == sh.channels.end() || it->second.pump_posted || stopped_) return;
  it->second.pump_posted = true;
  boost::asio::post(io_, [this, channel_id] { pump(channel_id); });
}

void inbound_service::wake(std::string_view channel_id) {
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  schedule_pump(sh, std::string(channel_id));
}

void inbound_service::pump(const std::string& channel_id) {
  auto where = channels_.route_of(channel_id);  // before our lock: the channel service has its own
  auto conn = where ? connectors_.find(where->plugin_id) : nullptr;
  std::shared_ptr<channel_route> route = where ? where->route : nullptr;
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  auto it = sh.channels.find(channel_id);
  if (it == sh.channels.end()) return;
  auto& st = it->second;
  st.pump_posted = false;
  if (st.sent_on.lock() != route) {
    // Whatever went to another socket (or to none) is unanswered as far as this one knows: resend.
    st.inbox.route_lost();
    st.sent_on = route;
    st.awaiting_drain = false;  // the old socket's drain no longer matters
  }
  if (!route || !conn || !st.inbox.has_work()) return;
  bool v2 = has(route->profiles(), im_v2);
  if (!v2 && !has(route->profiles(), im_v1)) return;  // the socket speaks no IM profile: the queue waits
  // A socket whose outbox reached its budget takes nothing more until it drains: the messages wait here and in
  // the store, and this channel is pumped again when the socket says it drained (or at a tick).
  auto* budgeted = dynamic_cast<budgeted_route*>(route.get());
  auto hold = [&] {
    if (st.awaiting_drain) return;
    st.awaiting_drain = true;
    budgeted->when_drained([this, channel_id] { drained(channel_id); });
  };
  if (budgeted && budgeted->holding_deliveries()) return hold();
  long long t = now();
  inbound_wire wire;
  bool wire_ready = false;
  auto& count = sh.counters_by_plugin[st.plugin_id];
  std::optional<last_inbound> last;
  write_batch erased;
  // One at a time: each message is read from the store and admitted by the socket's budget before the next.
  for (;;) {
    auto batch_of = st.inbox.take_sendable(t, 1);
    retire(sh, st, channel_id, batch_of.expired, inbox_exit::expired, "expired", erased);
    if (batch_of.send.empty()) break;  // most pumps (every tick, every ack) find the window full or the queue idle
    auto seq = batch_of.send.front();
    auto m = read_message(channel_id, seq);
    if (!m) {
      // The record is gone or damaged: it can never be sent, so it leaves like a rejected one.
      spdlog::error("[plugin {}] channel {}: queued message {} cannot be read back from the store, dropped",
                    st.plugin_id, channel_id, seq);
      std::vector<inbound_message> gone{*st.inbox.find(seq)};
      st.inbox.drop(seq);
      retire(sh, st, channel_id, gone, inbox_exit::rejected, "unreadable", erased);
      continue;
    }
    std::vector<inbound_message> context_kept;
    for (const auto* c : st.inbox.context_of(seq))
      if (auto full = read_message(channel_id, c->seq)) context_kept.push_back(std::move(*full));
    std::vector<const inbound_message*> context;
    for (const auto& c : context_kept) context.push_back(&c);
    if (!wire_ready) {
      wire_ready = true;
      wire.channel_id = channel_id;
      wire.provider = target_provider(*conn->manifest());
      wire.context_in_text = cfg_.delivery.context_in_text;
      if (!v2) describe_connector(*conn, wire);  // what message.push adds (IM v1 §5)
      if (files_.download_url)
        wire.download_url = [this, plugin = conn->id()](std::string_view ref) { return files_.download_url(plugin, ref); };
    }
    auto packet = v2 ? chat_message_packet(wire, *m, context) : message_push_packet(wire, *m, context);
    // IM v1 has no business ack: a push is delivered once it is on the socket.
    std::function<void(bool)> written;
    if (!v2)
      written = [this, channel_id, id = m->message_id](bool ok) {
        if (ok) ack(channel_id, id, ack_status::accepted, false, "");
      };
    // Pushed under the lock: push only queues on the socket's strand, and two pumps of one channel on two I/O
    // threads must not interleave their messages.
    if (budgeted) {
      if (!budgeted->push_within_budget(packet, std::move(written))) {
        st.inbox.untake(seq);
        hold();
        break;
      }
    } else {
      route->push(std::move(packet), std::move(written));
    }
    ++count.sent;
    if (st.inbox.attempts(seq) > 1) ++count.redelivered;
    last = last_inbound{m->channel_key, m->msg_id, m->sender_id, m->sender_name, m->role};
  }
  if (!erased.ops.empty()) db_.write(std::move(erased));
  // Kept durably, so that a reply after a restart still goes to this conversation (plugin.h on_send).
  if (last && sh.last[channel_id] != *last) {
    sh.last[channel_id] = *last;
    write_batch kept;
    kept.put(std::string(last_db), channel_id, last_inbound_record(*last));
    db_.write(std::move(kept));
  }
}

void inbound_service::drained(const std::string& channel_id) {
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  auto it = sh.channels.find(channel_id);
  if (it == sh.channels.end()) return;
  it->second.awaiting_drain = false;
  schedule_pump(sh, channel_id);
}

// One read transaction on the calling (I/O) thread: the map is memory-mapped, so a cached page costs no disk wait.
std::optional<inbound_message> inbound_service::read_message(std::string_view channel_id, std::uint64_t seq) const {
  auto record = db_.get(messages_db, message_key(channel_id, seq));
  if (!record) return std::nullopt;
  return inbound_message::from_record(seq, *record);
}

void inbound_service::ack(std::string_view channel_id, std::string_view message_id, ack_status status,
                          bool retryable, std::string_view code) {
  write_batch batch;
  {
    auto& sh = shard_of(channel_id);
    std::lock_guard lock(sh.mutex);
    auto it = sh.channels.find(channel_id);
    if (it == sh.channels.end()) return;
    auto& st = it->second;
    long long t = now();
    auto gone = st.inbox.ack(message_id, status, retryable, t);
    if (status == ack_status::rejected && retryable) {
      if (st.inbox.backing_off(t))
        spdlog::info("[plugin {}] channel {}: message {} rejected ({}), retrying in {} ms", st.plugin_id,
                     it->first, message_id, code, st.inbox.paused_until() - t);
      return;
    }
    retire(sh, st, it->first, gone, status == ack_status::rejected ? inbox_exit::rejected : inbox_exit::accepted,
           code, batch);
    schedule_pump(sh, it->first);  // the window has room again
  }
  if (!batch.ops.empty())
    db_.write(std::move(batch), [](std::error_code ec) {
      if (ec) spdlog::error("acknowledged inbound messages could not be erased: {}", ec.message());
    });
}

void inbound_service::retire(shard& sh, channel_state& st, const std::string& channel_id,
                             const std::vector<inbound_message>& gone, inbox_exit why, std::string_view code,
                             write_batch& batch) {
  auto& count = sh.counters_by_plugin[st.plugin_id];
  for (const auto& m : gone) {
    batch.erase(std::string(messages_db), message_key(channel_id, m.seq));
    if (count.pending) --count.pending;
    switch (why) {
      case inbox_exit::accepted:
      case inbox_exit::duplicate:
        if (m.trigger) ++count.delivered;
        break;
      case inbox_exit::rejected:
        ++count.rejected;
        spdlog::warn("[plugin {}] channel {}: message {} rejected for good ({})", st.plugin_id, channel_id,
                     m.message_id, code);
        break;
      case inbox_exit::expired: {
        ++count.expired;
        if (auto n = expiries_logged.count())
          spdlog::warn("[plugin {}] channel {}: {} message(s) expired undelivered since the last such line",
                       st.plugin_id, channel_id, n);
        break;
      }
      case inbox_exit::evicted: {
        ++count.evicted;
        if (auto n = evictions_logged.count())
          spdlog::warn("[plugin {}] channel {}: {} message(s) dropped undelivered since the last such line "
                       "(capacity_exceeded, {} kept)", st.plugin_id, channel_id, n, policy_.capacity);
        break;
      }
    }
  }
}

void inbound_service::tick() {
  if (stopped_) return;
  // The last burst's count, once its interval is over (the counts per plugin: its health's inbound).
  if (auto n = evictions_logged.flush())
    spdlog::warn("{} message(s) dropped undelivered since the last such line (capacity_exceeded)", n);
  if (auto n = expiries_logged.flush()) spdlog::warn("{} message(s) expired undelivered since the last such line", n);
  long long t = now();
  write_batch batch;
  const bool sweep_ids = t >= next_id_sweep_;
  if (sweep_ids) next_id_sweep_ = t + id_sweep_period_ms;
  for (auto& sh : shards_) {
    std::lock_guard lock(sh.mutex);
    for (auto& [id, st] : sh.channels) {
      if (!st.inbox.has_work()) continue;
      retire(sh, st, id, st.inbox.expire(t), inbox_exit::expired, "expired", batch);
      if (st.inbox.check_timeouts(t))
        spdlog::info("[plugin {}] channel {}: no ack within {} s, retrying in {} ms", st.plugin_id, id,
                     cfg_.delivery.ack_timeout_s, st.inbox.paused_until() - t);
      if (!st.inbox.backing_off(t)) schedule_pump(sh, id);
    }
    if (sweep_ids) forget_expired_ids(sh, t);
  }
  if (!batch.ops.empty()) db_.write(std::move(batch));
  if (also_on_tick_) also_on_tick_();
}

void inbound_service::forget_expired_ids(shard& sh, long long t) {
  std::vector<std::string> keys;
  for (auto& [id, st] : sh.channels)
    for (const auto& msg_id : st.inbox.forget_expired_ids(t)) keys.push_back(id_key(id, msg_id));
  if (!keys.empty()) db_.erase_gradually(std::string(ids_db), std::move(keys));
}

void inbound_service::drop_channels(const std::vector<std::string>& channel_ids) {
  write_batch batch;
  for (const auto& id : channel_ids) {
    auto& sh = shard_of(id);
    std::lock_guard lock(sh.mutex);
    if (sh.last.erase(id)) batch.erase(std::string(last_db), id);
    auto it = sh.channels.find(id);
    if (it == sh.channels.end()) continue;
    auto& count = sh.counters_by_plugin[it->second.plugin_id];
    for (const auto& m : it->second.inbox.clear()) {
      batch.erase(std::string(messages_db), message_key(id, m.seq));
      if (count.pending) --count.pending;
    }
    sh.channels.erase(it);
  }
  // The msg_id windows of these channels, whatever the memory held.
  for (const auto& id : channel_ids)
    db_.scan(ids_db, id + "/", [&](std::string_view key, std::string_view) {
      batch.erase(std::string(ids_db), std::string(key));
      return true;
    });
  if (!batch.ops.empty()) db_.write(std::move(batch));
}

inbound_service::counters inbound_service::stats(std::string_view plugin_id) const {
  counters sum;
  for (const auto& sh : shards_) {
    std::lock_guard lock(sh.mutex);
    if (auto it = sh.counters_by_plugin.find(plugin_id); it != sh.counters_by_plugin.end()) sum += it->second;
  }
  return sum;
}

std::optional<inbound_service::last_inbound> inbound_service::last_delivered(std::string_view channel_id) const {
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  auto it = sh.last.find(channel_id);
  return it == sh.last.end() ? std::nullopt : std::optional(it->second);
}

std::size_t inbound_service::pending(std::string_view channel_id) const {
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  auto it = sh.channels.find(channel_id);
  return it == sh.channels.end() ? 0 : it->second.inbox.size();
}

}  // namespace xconn
