// Reading a request's payload once the decoder has checked the envelope.
#pragma once

#include "core/wire/packet.hpp"

#include <boost/json.hpp>

namespace xconn {

// The payload as an object ({} when absent); the decoder already checked that it is one, nested as deep as its
// limit allows (Boost.JSON's default of 32 levels would throw on a payload the decoder accepted).
inline boost::json::object payload_of(const packet_view& p) {
  if (!p.payload) return {};
  boost::json::parse_options options;
  options.max_depth = packet_decoder::max_depth;
  return boost::json::parse(*p.payload, {}, options).as_object();
}

// A string member, or nullptr when absent or of another type.
inline const boost::json::string* string_member(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v ? v->if_string() : nullptr;
}

}  // namespace xconn
