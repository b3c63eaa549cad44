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
  auto& emit = v.as_object();
  for (const auto& [key, value] : emit) {
    std::string name(key);
    if (name == "at") {
      if (!value.is_int64() || value.as_int64() < 0) return refuse(name, "must be unix milliseconds (a non-negative integer)");
    } else if (name == "trigger") {
      if (!value.is_bool()) return refuse(name, "must be a boolean");
    } else if (name != "text" && name != "sender_id" && name != "sender_name" && name != "msg_id" &&
               name != "channel_key" && name != "context_text") {
      return refuse(name, "unknown field");
    } else if (!value.is_string()) {
      return refuse(name, "must be a string");
    }
  }
  auto* text = emit.if_contains("text");
  if (!text) return refuse("text", "required");
  auto* context = emit.if_contains("context_text");
  if (text->as_string().empty() && (!context || context->as_string().empty())) return refuse("text", "must not be empty");
  if (auto* id = emit.if_contains("msg_id"); id && id->as_string().empty()) return refuse("msg_id", "must not be empty");
  return std::move(emit);
}

}  // namespace webhook
