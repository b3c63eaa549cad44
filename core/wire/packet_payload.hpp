// Reading a request's payload once the decoder has checked the envelope.
#pragma once

#include "core/wire/packet.hpp"

#include <boost/json.hpp>

namespace xconn {

// The payload as an object ({} when absent); the decoder already checked that it is one.
inline boost::json::object payload_of(const packet_view& p) {
  if (!p.payload) return {};
  return boost::json::parse(*p.payload).as_object();
}

// A string member, or nullptr when absent or of another type.
inline const boost::json::string* string_member(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v ? v->if_string() : nullptr;
}

}  // namespace xconn
