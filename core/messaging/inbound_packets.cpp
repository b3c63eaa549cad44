#include "core/messaging/inbound_packets.hpp"

#include "core/wire/packet.hpp"

#include <boost/json.hpp>

namespace xconn {
namespace json = boost::json;

namespace {

const std::string& model_text(const inbound_message& m) { return m.context_text.empty() ? m.text : m.context_text; }

// The newest context entries whose text fits the budget, in order.
std::vector<const inbound_message*> fitting(const std::vector<const inbound_message*>& context) {
  std::size_t used = 0;
  auto first = context.size();
  while (first > 0 && used + model_text(*context[first - 1]).size() <= max_context_bytes) {
    --first;
    used += model_text(*context[first]).size();
  }
  return {context.begin() + static_cast<std::ptrdiff_t>(first), context.end()};
}

json::array context_items(const std::vector<const inbound_message*>& context) {
  json::array items;
  for (const auto* c : context) {
    json::object item{{"sender_id", c->sender_id}, {"sender_name", c->sender_name}, {"text", model_text(*c)}};
    item["at"] = c->at ? c->at : c->accepted_at;
    items.push_back(std::move(item));
  }
  return items;
}

// Stock xAgent reads only `text`: the context is quoted ahead of it, one line per message.
std::string text_with_context(const inbound_message& m, const std::vector<const inbound_message*>& context,
                              bool quote) {
  if (!quote || context.empty()) return model_text(m);
  std::string out = "Earlier in this conversation:\n";
  for (const auto* c : context) {
    const std::string& who = !c->sender_name.empty() ? c->sender_name : !c->sender_id.empty() ? c->sender_id : "someone";
    out += who + ": " + model_text(*c) + "\n";
  }
  return out + "\n" + model_text(m);
}

// The message's file items with a download URL signed for this delivery (IM v2 §4, IM v1 §9).
json::array file_items(const inbound_wire& wire, const inbound_message& m) {
  json::array items = m.files;
  for (auto& item : items) {
    auto& o = item.as_object();
    if (wire.download_url) o["download_url"] = wire.download_url(o.at("file_ref").as_string());
  }
  return items;
}

std::string envelope(const inbound_wire& wire, std::string type, json::object payload) {
  outgoing_packet p;
  p.type = std::move(type);
  p.connector_channel_id = wire.channel_id;
  p.payload = std::move(payload);
  return encode_packet(p);
}

}  // namespace

std::string chat_message_packet(const inbound_wire& wire, const inbound_message& m,
                                const std::vector<const inbound_message*>& all_context) {
  auto context = fitting(all_context);
  json::object payload{{"message_id", m.message_id},
                       {"text", text_with_context(m, context, wire.context_in_text)},
                       {"created_at", m.at ? m.at : m.accepted_at}};
  if (!context.empty()) payload["context"] = context_items(context);
  if (!m.sender_id.empty() || !m.sender_name.empty())
    payload["sender"] = json::object{{"id", m.sender_id}, {"name", m.sender_name}};
  if (!m.modality.empty()) payload["modality"] = m.modality;
  if (!m.files.empty()) payload["files"] = file_items(wire, m);
  return envelope(wire, "chat.message", std::move(payload));
}

// IM v1 §6's description of a message, for one that has no text of its own (files only): the model still reads
// who sent what.
std::string described(const inbound_wire& wire, const std::string& sender, const std::string& chat_type,
                      const std::string& message_type, const inbound_message& m) {
  std::string out = "User message from " + (wire.label.empty() ? wire.provider : wire.label) + ":\nSender: " + sender +
                    "\nConversation type: " + chat_type + "\nMessage type: " + message_type + "\nUser text: none";
  for (const auto& f : m.files)
    if (auto* name = f.as_object().if_contains("filename"); name && name->is_string())
      out += "\nFile: " + std::string(name->as_string());
  return out;
}

std::string message_push_packet(const inbound_wire& wire, const inbound_message& m,
                                const std::vector<const inbound_message*>& all_context) {
  auto context = fitting(all_context);
  // channel_key is <plugin>/<kind>/<id>: the kind is the conversation type (group, p2p, ...).
  auto first = m.channel_key.find('/');
  auto second = m.channel_key.find('/', first + 1);
  std::string chat_type = first == std::string::npos || second == std::string::npos
                              ? "group"
                              : m.channel_key.substr(first + 1, second - first - 1);
  std::string sender_id = m.sender_id.empty() ? "unknown" : m.sender_id;
  json::object payload{{"provider", wire.provider},
                       {"profile", "xagent.im.v1"},
                       {"event_kind", "im.message.received"},
                       {"message_id", m.message_id},
                       {"sender_id", sender_id},
                       {"display_name", m.sender_name.empty() ? sender_id : m.sender_name},
                       {"chat_type", chat_type},
                       {"message_type", "text"},
                       {"raw_text", m.text},
                       {"text", text_with_context(m, context, wire.context_in_text)}};
  if (!m.sender_name.empty()) payload["sender_name"] = m.sender_name;
  if (!context.empty()) payload["context"] = context_items(context);
  if (!m.files.empty()) {
    payload["files"] = file_items(wire, m);
    payload["message_type"] = m.files.front().as_object().at("type") == "image" ? "image" : "file";
  }
  if (model_text(m).empty() && context.empty())
    payload["text"] = described(wire, std::string(payload["display_name"].as_string()), chat_type,
                                std::string(payload["message_type"].as_string()), m);
  if (!wire.skill.empty()) {
    json::array tool_ids;
    for (const auto& t : wire.v1_tools) tool_ids.emplace_back(t);
    payload["skill"] = json::object{{"name", wire.skill}, {"tool_ids", std::move(tool_ids)}};
  }
  if (!wire.reply_tool.empty()) payload["reply"] = json::object{{"required", m.trigger}, {"tool_id", wire.reply_tool}};
  return envelope(wire, "message.push", std::move(payload));
}

}  // namespace xconn
