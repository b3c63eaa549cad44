// Small readers of the Bot API's JSON and of the host's: an object from text, a string member, an id as text.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace telegram {

inline std::optional<boost::json::object> parse_object(std::string_view text) {
  boost::json::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return v.as_object();
}

inline std::string string_at(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

inline std::string id_text(const boost::json::value* v) {
  if (!v) return "";
  if (v->is_int64()) return std::to_string(v->as_int64());
  if (v->is_uint64()) return std::to_string(v->as_uint64());
  return v->is_string() ? std::string(v->as_string()) : std::string();
}

inline const boost::json::object& no_params() {
  static const boost::json::object none;
  return none;
}

}  // namespace telegram
