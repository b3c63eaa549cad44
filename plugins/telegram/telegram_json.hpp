// Small readers of the Bot API's JSON and of the host's: an object from text, a string member, an id as text.
#pragma once

#include "kit/json_fields.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace telegram {

using xconn::kit::parse_object;
using xconn::kit::string_at;

inline std::string id_text(const boost::json::value* v) {
  if (!v) return "";
  if (v->is_int64()) return std::to_string(v->as_int64());
  if (v->is_uint64()) return std::to_string(v->as_uint64());
  return v->is_string() ? std::string(v->as_string()) : std::string();
}

// getChat's parameters for the chat a sign-in names: a numeric id as a number, anything else as given (an
// @username; Telegram answers a malformed one with its own refusal).
inline boost::json::object chat_params(const std::string& chat) {
  boost::json::object params;
  long long id = 0;
  auto [end, ec] = std::from_chars(chat.data(), chat.data() + chat.size(), id);
  if (!chat.empty() && ec == std::errc() && end == chat.data() + chat.size()) params["chat_id"] = id;
  else params["chat_id"] = chat;
  return params;
}

inline const boost::json::object& no_params() {
  static const boost::json::object none;
  return none;
}

}  // namespace telegram
