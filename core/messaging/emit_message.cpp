#include "core/messaging/emit_message.hpp"

#include "core/files/file_store.hpp"

#include <boost/json.hpp>

namespace xconn {
namespace json = boost::json;

namespace {

using emit_result = boost::system::result<inbound_message, std::string>;
emit_result refuse(std::string why) { return emit_result(boost::system::in_place_error, std::move(why)); }

bool printable(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

bool id_chars(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  return true;
}

// <plugin>/<kind>/<id>: the plugin's own id first, a lowercase kind, then the target's conversation id.
bool valid_channel_key(std::string_view key, std::string_view plugin_id) {
  if (key.size() > emit_max_field_bytes || !printable(key) || key.find(' ') != std::string_view::npos) return false;
  auto first = key.find('/');
  if (first == std::string_view::npos || key.substr(0, first) != plugin_id) return false;
  auto second = key.find('/', first + 1);
  if (second == std::string_view::npos || !id_chars(key.substr(first + 1, second - first - 1), 32)) return false;
  return second + 1 < key.size();
}

// files: [{"file_ref"}] of files the plugin put through the host; the host adds what it knows of each.
std::string read_files(const json::value& value, json::array& out) {
  if (!value.is_array()) return "files: must be an array of {\"file_ref\"}";
  if (value.as_array().size() > emit_max_files) return "files: over " + std::to_string(emit_max_files) + " files";
  for (const auto& item : value.as_array()) {
    const auto* ref = item.is_object() ? item.as_object().if_contains("file_ref") : nullptr;
    if (!ref || !ref->is_string() || !valid_file_ref(ref->as_string()))
      return "files: each item needs a file_ref the host gave";
    for (const auto& seen : out)
      if (seen.as_object().at("file_ref") == *ref) return "files: a file_ref twice";
    out.push_back(json::object{{"file_ref", *ref}});
  }
  return {};
}

}  // namespace

emit_result parse_emit(std::string_view text, const plugin_manifest& manifest) {
  if (text.size() > emit_max_bytes) return refuse("message: over " + std::to_string(emit_max_bytes) + " bytes");
  json::parse_options options;
  options.max_depth = 8;
  boost::system::error_code ec;
  auto v = json::parse(text, ec, {}, options);
  if (ec || !v.is_object()) return refuse("message: not a JSON object");
  const auto& o = v.as_object();

  inbound_message m;
  for (const auto& kv : o) {
    std::string_view key = kv.key();
    const auto& value = kv.value();
    auto string_field = [&](std::string& out, std::size_t max) -> std::string {
      if (!value.is_string()) return std::string(key) + ": must be a string";
      if (value.as_string().size() > max) return std::string(key) + ": over " + std::to_string(max) + " bytes";
      out = value.as_string();
      return {};
    };
    std::string why;
    if (key == "text") {
      why = string_field(m.text, emit_max_text_bytes);
    } else if (key == "context_text") {
      why = string_field(m.context_text, emit_max_text_bytes);
    } else if (key == "channel_key") {
      why = string_field(m.channel_key, emit_max_field_bytes);
      if (why.empty() && !valid_channel_key(m.channel_key, manifest.id))
        why = "channel_key: must be " + manifest.id + "/<kind>/<id> (kind: a-z 0-9 _ -)";
    } else if (key == "sender_id" || key == "sender_name") {
      why = string_field(key == "sender_id" ? m.sender_id : m.sender_name, emit_max_field_bytes);
      if (why.empty() && !printable(key == "sender_id" ? m.sender_id : m.sender_name))
        why = std::string(key) + ": control characters";
    } else if (key == "msg_id") {
      why = string_field(m.msg_id, emit_max_field_bytes);
      if (why.empty() && m.msg_id.empty()) why = "msg_id: must not be empty";
    } else if (key == "at") {
      if (!value.is_int64() || value.as_int64() < 0 || value.as_int64() > (1LL << 53))
        why = "at: must be unix milliseconds (a non-negative integer)";
      else
        m.at = value.as_int64();
    } else if (key == "trigger") {
      if (!value.is_bool()) why = "trigger: must be a boolean";
      else m.trigger = value.as_bool();
    } else if (key == "role") {
      why = string_field(m.role, 32);
      if (why.empty() && !id_chars(m.role, 32)) why = "role: a lowercase id";
      if (why.empty() && m.role != "self" && manifest.chat && !manifest.chat->roles.empty() &&
          !manifest.chat->roles.count(m.role))
        why = "role: not a role of the plugin's chat";
    } else if (key == "modality") {
      why = string_field(m.modality, 8);
      if (why.empty() && m.modality != "text" && m.modality != "voice") why = "modality: text or voice";
    } else if (key == "files") {
      why = read_files(value, m.files);
    } else {
      why = std::string(key) + ": unknown field";
    }
    if (!why.empty()) return refuse(std::move(why));
  }
  // A file message may come without text (IM v2 §4: text or files).
  if (!o.contains("text") && m.files.empty()) return refuse("text: required");
  if (m.text.empty() && m.context_text.empty() && m.files.empty()) return refuse("text: must not be empty");
  if (m.channel_key.empty()) m.channel_key = manifest.id + "/group/default";
  if (m.role == "self") m.trigger = false;  // seed 002: self only as context
  return m;
}

}  // namespace xconn
