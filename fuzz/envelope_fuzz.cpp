// The data-plane envelope decoder (core/wire/packet.cpp) fed whole WebSocket text frames. Beyond not crashing:
// a frame decodes the same way twice on one decoder (its buffers are reused), a refused frame always says why, an
// accepted one is JSON that Boost.JSON reads too (but for its exponent limit), its payload is what payload_of()
// reads without throwing (the dispatch relies on it), and re-encoding its fields with encode_packet() decodes to the same fields.
#include "core/wire/packet.hpp"
#include "core/wire/packet_payload.hpp"
#include "fuzz/fuzz_check.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace xconn;

// JSON equality, but doubles within a relative 1e-15: Boost.JSON 1.81 reads some long decimal literals to a double
// one ULP off the correctly rounded one, so serialize-then-parse of a double is not always exact, and it reads 0e440
// as NaN (library limits, noted in docs/fuzzing.md).
bool same_json(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_double() && b.is_double()) {
    const double x = a.get_double(), y = b.get_double();
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y || std::fabs(x - y) <= 1e-15 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.kind() != b.kind()) return false;
  if (a.is_object()) {
    const auto &oa = a.get_object(), &ob = b.get_object();
    if (oa.size() != ob.size()) return false;
    for (const auto& kv : oa) {
      auto* other = ob.if_contains(kv.key());
      if (!other || !same_json(kv.value(), *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    const auto &xa = a.get_array(), &xb = b.get_array();
    if (xa.size() != xb.size()) return false;
    for (std::size_t i = 0; i < xa.size(); ++i)
      if (!same_json(xa[i], xb[i])) return false;
    return true;
  }
  return a == b;
}

// Whether v holds a NaN or an infinity (Boost.JSON reads 0e440 as NaN and would write it as NaN, which is not JSON).
bool has_non_finite(const boost::json::value& v) {
  if (v.is_double()) return !std::isfinite(v.get_double());
  if (v.is_object()) {
    for (const auto& kv : v.get_object())
      if (has_non_finite(kv.value())) return true;
  }
  if (v.is_array()) {
    for (const auto& x : v.get_array())
      if (has_non_finite(x)) return true;
  }
  return false;
}

std::string opt(const std::optional<std::string_view>& v) { return v ? std::string(*v) : std::string(); }

// Owning copy of a view: the views die with the decoder's next decode.
struct fields {
  std::string packet_id, type, request_id, reply_to, channel, error_code, payload;
  bool has_payload = false;
  std::optional<std::int64_t> time;
  explicit fields(const packet_view& p)
      : packet_id(p.packet_id), type(p.type), request_id(opt(p.request_id)), reply_to(opt(p.reply_to)),
        channel(opt(p.connector_channel_id)), error_code(opt(p.error_code)), payload(opt(p.payload)),
        has_payload(p.payload.has_value()), time(p.time) {}
  bool operator==(const fields&) const = default;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static packet_decoder decoder;  // one per session in the server: reuse across frames is part of what is tested
  const std::string_view frame(reinterpret_cast<const char*>(data), size);

  packet_error error;
  auto p = decoder.decode(frame, error);
  if (!p) {
    FUZZ_CHECK(!error.message.empty());
    packet_error again;
    FUZZ_CHECK(!decoder.decode(frame, again) && again.message == error.message);
    return 0;
  }
  const fields first(*p);
  FUZZ_CHECK(!first.packet_id.empty() && !first.type.empty());
  FUZZ_CHECK(!first.time || *first.time >= 0);

  // The whole frame is JSON by Boost.JSON's reading too, with the decoder's depth (the envelope is level 1), except
  // for the one known difference: Boost.JSON 1.81 refuses exponents of many digits that simdjson takes. The
  // dispatch reads the payload with payload_of() (packet_handlers.cpp): never a throw, and every payload Boost.JSON
  // reads is read.
  boost::json::parse_options deep;
  deep.max_depth = packet_decoder::max_depth;
  boost::system::error_code ec;
  auto whole = boost::json::parse(frame, ec, {}, deep);
  auto read = payload_of(*p);
  if (ec) {
    FUZZ_CHECK(ec == boost::json::error::exponent_overflow);
    return 0;
  }
  FUZZ_CHECK(whole.is_object() && read.has_value());
  const boost::json::object payload = std::move(*read);
  if (first.has_payload) FUZZ_CHECK(same_json(payload, whole.as_object().at("payload")));

  if (has_non_finite(payload)) return 0;  // the library limit noted in docs/fuzzing.md: no re-encoding to check

  outgoing_packet out;
  out.packet_id = first.packet_id;
  out.type = first.type;
  out.request_id = first.request_id;
  out.reply_to = first.reply_to;
  out.connector_channel_id = first.channel;
  out.error_code = first.error_code;
  out.time_ms = first.time.value_or(0);
  if (first.has_payload) out.payload = payload;
  const std::string encoded = encode_packet(out);

  auto again = decoder.decode(encoded, error);
  FUZZ_CHECK(again.has_value());
  fields second(*again);
  FUZZ_CHECK(second.packet_id == first.packet_id && second.type == first.type);
  FUZZ_CHECK(second.request_id == first.request_id && second.reply_to == first.reply_to);
  FUZZ_CHECK(second.channel == first.channel && second.error_code == first.error_code);
  FUZZ_CHECK(second.time.value_or(0) == first.time.value_or(0));
  FUZZ_CHECK(second.has_payload == first.has_payload);
  if (first.has_payload) FUZZ_CHECK(same_json(boost::json::parse(second.payload, ec, {}, deep), payload));

  // The frame itself, once more, after another frame went through the decoder.
  auto third = decoder.decode(frame, error);
  FUZZ_CHECK(third.has_value() && fields(*third) == first);
  return 0;
}
