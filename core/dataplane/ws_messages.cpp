// The IM v2 packets of the data plane (IM v2 §5-8, docs/protocol.md "Inbound messages", "Outbound messages"): finals
// and deltas from xAgent to the plugin, acks of inbound messages, and activity.
#include "core/dataplane/ws_session.hpp"

#include "core/channels/channel_service.hpp"
#include "core/messaging/inbound_service.hpp"
#include "core/messaging/outbound_service.hpp"
#include "core/wire/packet_payload.hpp"

#include <boost/json.hpp>

#include <set>

namespace xconn {
namespace json = boost::json;

namespace {

constexpr std::size_t max_message_id_bytes = 1024;
constexpr std::size_t max_tool_name_bytes = 256;  // IM v2 §8

bool valid_message_id(const json::string* id) { return id && !id->empty() && id->size() <= max_message_id_bytes; }

// Why a final from xAgent cannot be handed to the plugin ("" when it can): IM v2 §3 and §5.
std::string final_problem(const json::object& payload) {
  for (auto forbidden : {"session_id", "user_connector_id", "user_id", "connector_id", "role"})
    if (payload.contains(forbidden)) return std::string("payload.") + forbidden + " is not allowed";
  const auto* text = payload.if_contains("text");
  if (text && !text->is_string() && !text->is_null()) return "payload.text must be a string";
  const auto* files = payload.if_contains("files");
  if (files && !files->is_array() && !files->is_null()) return "payload.files must be an array";
  bool has_text = text && text->is_string() && !text->as_string().empty();
  bool has_files = files && files->is_array() && !files->as_array().empty();
  if (!has_text && !has_files) return "a final needs text or files";
  if (!has_files) return {};
  static const std::set<std::string_view> types = {"image", "video", "audio", "file"};
  std::set<std::string_view> refs;
  for (const auto& f : files->as_array()) {
    if (!f.is_object()) return "payload.files[] must be objects";
    const auto& o = f.as_object();
    auto* type = string_member(o, "type");
    if (!type || !types.count(std::string_view(*type))) return "payload.files[].type must be image, video, audio or file";
    auto* ref = string_member(o, "file_ref");
    if (!ref || ref->empty() || ref->size() > 256) return "payload.files[].file_ref is required";
    if (!refs.insert(std::string_view(*ref)).second) return "payload.files[].file_ref must be unique in the message";
    for (auto forbidden : {"content_base64", "data", "path", "local_path"})
      if (o.contains(forbidden)) return std::string("payload.files[].") + forbidden + " is not allowed: bytes travel through the transfer plane";
  }
  return {};
}

}  // namespace

void ws_session::on_chat_message(const packet_view& p, const channel& c, const json::object& payload) {
  auto* message_id = string_member(payload, "message_id");
  if (!valid_message_id(message_id))
    return send_error(&p, "invalid_packet", "payload.message_id must be a string of 1-1024 bytes");
  // The ack answers the packet: reply_to is its packet_id (IM v2 §7), the channel and message_id its own.
  auto ack = reply_to(p, "chat.message.ack");
  ack.connector_channel_id = c.id;
  auto answer_now = [&](json::object ack_payload) {
    ack.payload = std::move(ack_payload);
    send(encode_packet(ack));
  };
  auto reject = [&](std::string_view code, std::string_view message) {
    answer_now(json::object{
        {"message_id", *message_id}, {"status", "rejected"}, {"code", code}, {"retryable", false}, {"message", message}});
  };
  if (auto problem = final_problem(payload); !problem.empty()) return reject("invalid_reply", problem);
  if (!c.authenticated) return reject("connection_not_authenticated", "the channel is not signed in to the target");

  outbound_service::final_message m;
  m.channel_id = c.id;
  m.message_id = *message_id;
  m.packet_id = p.packet_id;
  if (auto* text = string_member(payload, "text")) m.text = *text;
  if (auto* files = payload.if_contains("files"); files && files->is_array()) m.files = files->as_array();
  ++in_flight_;  // answered through deliver_answer
  ctx_.outbound.send_final(*connector_, std::move(m),
                           [self = shared_from_this(), ack = std::move(ack)](json::object ack_payload) mutable {
                             ack.payload = std::move(ack_payload);
                             self->deliver_answer(encode_packet(ack));
                           });
}

void ws_session::on_chat_delta(const packet_view& p, const channel& c, const json::object& payload) {
  auto* message_id = string_member(payload, "message_id");
  auto* sequence = payload.if_contains("sequence");
  auto* text = string_member(payload, "text");
  if (!valid_message_id(message_id) || !sequence || !sequence->is_int64() || !text)
    return send_error(&p, "invalid_packet", "a delta needs message_id (string), sequence (integer) and text (string)");
  auto code = ctx_.outbound.delta(*connector_, c.id, std::string(*message_id), sequence->as_int64(), *text);
  if (code == "invalid_sequence")
    return send_error(&p, code, "sequence must start at 1 and grow by 1; a repeat must carry the same text");
  if (!code.empty()) send_error(&p, code, "the message's deltas are over the size limit");
}

void ws_session::on_chat_ack(const packet_view& p, const channel& c, const json::object& payload) {
  auto* message_id = string_member(payload, "message_id");
  auto* status = string_member(payload, "status");
  if (!valid_message_id(message_id) || !status)
    return send_error(&p, "invalid_packet", "an ack needs message_id and status");
  ack_status s;
  if (*status == "accepted") {
    s = ack_status::accepted;
  } else if (*status == "duplicate") {
    s = ack_status::duplicate;
  } else if (*status == "rejected") {
    s = ack_status::rejected;
  } else {
    return send_error(&p, "invalid_packet", "status must be accepted, duplicate or rejected");
  }
  auto* code = string_member(payload, "code");
  auto* retryable = payload.if_contains("retryable");
  if (s == ack_status::rejected && (!code || code->empty() || !retryable || !retryable->is_bool()))
    return send_error(&p, "invalid_packet", "a rejection needs a code and a boolean retryable (IM v2 §7)");
  ctx_.inbound.ack(c.id, *message_id, s, s == ack_status::rejected && retryable->as_bool(),
                   code ? std::string_view(*code) : std::string_view());
}

void ws_session::on_chat_activity(const packet_view& p, const channel& c, const json::object& payload) {
  auto* status = string_member(payload, "status");
  auto* tool_name = string_member(payload, "tool_name");
  bool tool = status && *status == "tool";
  if (!status || (*status != "thinking" && *status != "idle" && !tool))
    return send_error(&p, "invalid_packet", "status must be thinking, tool or idle");
  if (tool && (!tool_name || tool_name->empty() || tool_name->size() > max_tool_name_bytes))
    return send_error(&p, "invalid_packet", "tool_name (at most 256 bytes) is required with status tool");
  if (!tool && payload.contains("tool_name"))
    return send_error(&p, "invalid_packet", "tool_name is only allowed with status tool");
  ctx_.outbound.activity(*connector_, c.id, std::string(*status), tool ? std::string(*tool_name) : std::string());
}

}  // namespace xconn
