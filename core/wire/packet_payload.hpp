// Reading a request's payload once the decoder has checked the envelope.
#pragma once

#include "core/wire/packet.hpp"

#include <boost/json.hpp>

#include <optional>

namespace xconn {

// The payload as an object ({} when absent), read as deep as the decoder allows (Boost.JSON's default of 32 levels
// is less). nullopt when Boost.JSON cannot read what the decoder accepted (it refuses numbers simdjson takes, such as
// an exponent of many digits): the packet is then invalid, never an exception on the I/O thread.
inline std::optional<boost::json::object> payload_of(const packet_view& p) {
  if (!p.payload) return boost::json::object{};
  boost::json::parse_options options;
  options.max_depth = packet_decoder::max_depth;
  boost::system::error_code ec;
  auto v = boost::json::parse(*p.payload, ec, {}, options);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

// A string member, or nullptr when absent or of another type.
inline const boost::json::string* string_member(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v ? v->if_string() : nullptr;
}

}  // namespace xconn
