// Small readers of the Bot API's JSON and of the host's: an object from text, a string member, an id as text.
#pragma once

#include "kit/json_fields.hpp"

#include <boost/json.hpp>

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

inline const boost::json::object& no_params() {
  static const boost::json::object none;
  return none;
}

}  // namespace telegram
