// Sending queued messages to the channel's route (pump), one at a time within the socket's budget, and xAgent's
// acks of them.
#include "core/messaging/inbound_service.hpp"

#include "core/messaging/budgeted_route.hpp"
#include "core/messaging/inbound_packets.hpp"
#include "core/messaging/inbound_records.hpp"

#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace xconn {

namespace {

constexpr std::string_view im_v2 = "xagent.im.v2";
constexpr std::string_view im_v1 = "xagent.im.v1";

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
  auto record = db_.get(messages_db, inbound_message_key(channel_id, seq));
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


}  // namespace xconn
