// An inbound POST's body (docs/adapters.md "webhook"): the emit fields {"text", "sender_id", "sender_name", "msg_id",
// "channel_key", "at", "trigger", "context_text"} as one JSON object, read into the emit the host gets. A bad body
// is refused naming its field; the host checks the values' finer rules (lengths, the channel_key shape) the same way.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <variant>

namespace webhook {

struct body_error {
  std::string field;    // "text", "at", ... or "body" for the document itself
  std::string message;  // "<field>: why"
};

inline std::variant<boost::json::object, body_error> read_inbound_body(std::string_view body) {
  auto refuse = [](std::string field, std::string why) { return body_error{field, field + ": " + why}; };
  boost::json::parse_options options;
  options.max_depth = 4;
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec, {}, options);
  if (ec || !v.is_object()) return refuse("body", "must be a JSON object");
  boost::json::object emit;
  for (const auto& kv : v.as_object()) {
    std::string key(kv.key());
    const auto& value = kv.value();
    if (key == "text" || key == "sender_id" || key == "sender_name" || key == "msg_id" || key == "channel_key" ||
        key == "context_text") {
      if (!value.is_string()) return refuse(key, "must be a string");
    } else if (key == "at") {
      if (!value.is_int64() || value.as_int64() < 0) return refuse(key, "must be unix milliseconds (a non-negative integer)");
    } else if (key == "trigger") {
      if (!value.is_bool()) return refuse(key, "must be a boolean");
    } else {
      return refuse(key, "unknown field");
    }
    emit[key] = value;
  }
  auto* text = emit.if_contains("text");
  if (!text) return refuse("text", "required");
  auto* context = emit.if_contains("context_text");
  if (text->as_string().empty() && (!context || context->as_string().empty())) return refuse("text", "must not be empty");
  if (auto* id = emit.if_contains("msg_id"); id && id->as_string().empty()) return refuse("msg_id", "must not be empty");
  return emit;
}

}  // namespace webhook
