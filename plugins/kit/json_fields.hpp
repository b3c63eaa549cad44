// Reading the host's JSON in a plugin: an object from text (nullopt for anything else) and a string member ("" when
// absent or not a string).
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace xconn::kit {

inline std::optional<boost::json::object> parse_object(std::string_view text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

inline std::string string_at(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace xconn::kit
