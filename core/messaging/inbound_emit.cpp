// Taking one plugin emit: checked, its files described, committed with its msg_id (and the plugin's own writes),
// or answered as a duplicate with the first message's id.
#include "core/messaging/inbound_service.hpp"

#include "core/base/ids.hpp"
#include "core/messaging/emit_message.hpp"
#include "core/messaging/inbound_packets.hpp"
#include "core/messaging/inbound_records.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

namespace xconn {
namespace json = boost::json;

namespace {

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


}  // namespace

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
  if (const auto* first = m.msg_id.empty() ? nullptr : st.inbox.first_message_id(m.msg_id, t)) {
    ++count.duplicates;
    write_batch state;
    if (also_commit)
      if (auto refused = also_commit(state)) return done(std::move(*refused));
    // Answered behind every write queued before it, the first message's commit among them: a duplicate never names
    // a message that is not durable yet, nor one whose commit failed.
    return db_.write(std::move(state), [this, channel_id, msg_id = m.msg_id, first = *first, t,
                                        done = std::move(done)](std::error_code ec) {
      if (ec) return done({false, "", false, "store_failed", "the host could not store the write"});
      if (!still_first(channel_id, msg_id, first, t))
        return done({false, "", false, "store_failed", "the first message with this msg_id was not stored"});
      done({true, first, true, "", ""});
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
  batch.put(std::string(messages_db), inbound_message_key(channel_id, m.seq), m.to_record());
  m.drop_body();  // the record in the batch has it; a delivery reads it back from the store
  if (!m.msg_id.empty()) {
    st.inbox.remember(m.msg_id, m.expires_at, m.message_id);
    batch.put(std::string(ids_db), inbound_id_key(channel_id, m.msg_id), to_record(inbound_id_record{m.expires_at, m.message_id}));
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

bool inbound_service::still_first(const std::string& channel_id, const std::string& msg_id,
                                  const std::string& message_id, long long judged_at) const {
  auto& sh = shard_of(channel_id);
  std::lock_guard lock(sh.mutex);
  auto it = sh.channels.find(channel_id);
  const auto* first = it == sh.channels.end() ? nullptr : it->second.inbox.first_message_id(msg_id, judged_at);
  return first && *first == message_id;
}


}  // namespace xconn
