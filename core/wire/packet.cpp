#include "core/wire/packet.hpp"

#include "core/base/ids.hpp"
#include "core/wire/json_append.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace xconn {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// Calls visit(key, value) for each member of object, stopping at the first error (of simdjson's or visit's).
template <class Visit>
error_code for_each_member(od::object& object, Visit&& visit) {
  for (auto field : object) {
    std::string_view key;
    od::value value;
    if (auto e = field.unescaped_key().get(key)) return e;
    if (auto e = field.value().get(value)) return e;
    if (auto e = visit(key, value)) return e;
  }
  return simdjson::SUCCESS;
}

// On-demand parsing skips values nobody asks for without checking them, so every value of the frame goes
// through here: that is what makes the whole frame well-formed JSON (structure, escapes, numbers, literals)
// and bounds its nesting. depth is the nesting level v opens if it is a container (the envelope is 1).
error_code validate(od::value& v, std::size_t depth) {
  od::json_type type{};
  if (auto e = v.type().get(type)) return e;
  switch (type) {
    case od::json_type::object: {
      if (depth > packet_decoder::max_depth) return simdjson::DEPTH_ERROR;
      od::object object;
      if (auto e = v.get_object().get(object)) return e;
      return for_each_member(object, [&](std::string_view, od::value& child) { return validate(child, depth + 1); });
    }
    case od::json_type::array: {
      if (depth > packet_decoder::max_depth) return simdjson::DEPTH_ERROR;
      od::array array;
      if (auto e = v.get_array().get(array)) return e;
      for (auto element : array) {
        od::value child;
        if (auto e = element.get(child)) return e;
        if (auto e = validate(child, depth + 1)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case od::json_type::number: {
      od::number n;
      return v.get_number().get(n);
    }
    case od::json_type::boolean: {
      bool b = false;
      return v.get_bool().get(b);
    }
    case od::json_type::null: {
      bool is_null = false;
      if (auto e = v.is_null().get(is_null)) return e;
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::TAPE_ERROR;
}

enum envelope_key : unsigned {
  k_schema = 1, k_packet_id = 2, k_type = 4, k_request_id = 8, k_reply_to = 16,
  k_connector_channel_id = 32, k_time = 64, k_payload = 128, k_error = 256,
};

unsigned key_bit(std::string_view key) {
  if (key == "schema") return k_schema;
  if (key == "packet_id") return k_packet_id;
  if (key == "type") return k_type;
  if (key == "request_id") return k_request_id;
  if (key == "reply_to") return k_reply_to;
  if (key == "connector_channel_id") return k_connector_channel_id;
  if (key == "time") return k_time;
  if (key == "payload") return k_payload;
  if (key == "error") return k_error;
  return 0;
}

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// One pass over the envelope. A broken envelope rule is remembered and reading goes on, so that the ids are
// echoed whatever their position; a JSON error stops everything.
class envelope_reader {
 public:
  packet_view out;
  std::optional<std::string_view> packet_id;  // as read, even when empty: for the error echo
  const char* problem = nullptr;              // the first envelope rule broken

  error_code read(od::parser& parser, const std::string& buffer, std::size_t length) {
    if (auto e = parser.iterate(buffer.data(), length, buffer.size()).get(doc_)) return e;
    od::json_type type{};
    if (auto e = doc_.type().get(type)) return e;
    if (type != od::json_type::object) {
      fail("packet must be a JSON object");
      return simdjson::SUCCESS;
    }
    od::object root;
    if (auto e = doc_.get_object().get(root)) return e;
    if (auto e = for_each_member(root, [&](std::string_view key, od::value& v) { return read_field(key, v); }))
      return e;
    // A second document or garbage after the object.
    if (doc_.current_location().error() != simdjson::OUT_OF_BOUNDS) return simdjson::TRAILING_CONTENT;
    if (!(seen_ & k_schema)) fail("schema is missing");
    if (!(seen_ & k_packet_id)) fail("packet_id is missing");
    if (!(seen_ & k_type)) fail("type is missing");
    return simdjson::SUCCESS;
  }

 private:
  od::document doc_;
  unsigned seen_ = 0;

  void fail(const char* why) {
    if (!problem) problem = why;
  }

  // Reads v into s when it is a string; anything else is still validated, and reported through ok.
  error_code read_string(od::value& v, std::string_view& s, bool& ok) {
    od::json_type type{};
    if (auto e = v.type().get(type)) return e;
    ok = type == od::json_type::string;
    return ok ? v.get_string().get(s) : validate(v, 2);
  }

  error_code read_optional_string(od::value& v, std::optional<std::string_view>& out, const char* why) {
    std::string_view s;
    bool ok = false;
    if (auto e = read_string(v, s, ok)) return e;
    if (ok) out = s;
    else fail(why);
    return simdjson::SUCCESS;
  }

  error_code read_field(std::string_view key, od::value& v) {
    const unsigned bit = key_bit(key);
    if (bit == 0) return validate(v, 2);  // unknown keys are ignored (forward compatibility), but must be JSON
    // Only envelope keys are checked for duplicates: remembering unknown keys would cost memory and time
    // proportional to the frame, and they are ignored anyway.
    if (seen_ & bit) fail("duplicate envelope key");
    seen_ |= bit;
    std::string_view s;
    bool ok = false;
    switch (bit) {
      case k_schema:
        if (auto e = read_string(v, s, ok)) return e;
        if (!ok || s != packet_schema) fail("schema must be xagent.connector.packet/v1");
        return simdjson::SUCCESS;
      case k_packet_id:
        if (auto e = read_string(v, s, ok)) return e;
        if (ok) packet_id = out.packet_id = s;
        if (!ok || s.empty()) fail("packet_id must be a non-empty string");
        return simdjson::SUCCESS;
      case k_type:
        if (auto e = read_string(v, s, ok)) return e;
        if (ok) out.type = s;
        if (!ok || s.empty()) fail("type must be a non-empty string");
        return simdjson::SUCCESS;
      case k_request_id: return read_optional_string(v, out.request_id, "request_id must be a string");
      case k_reply_to: return read_optional_string(v, out.reply_to, "reply_to must be a string");
      case k_connector_channel_id:
        return read_optional_string(v, out.connector_channel_id, "connector_channel_id must be a string");
      case k_time: return read_time(v);
      case k_payload: return read_payload(v);
      default: return read_error(v);
    }
  }

  // Whether v is of type want. When it is not, records why and checks that v is still well-formed JSON (the
  // frame as a whole must be), leaving that check's outcome in e.
  bool is_a(od::value& v, od::json_type want, const char* why, error_code& e) {
    od::json_type type{};
    if ((e = v.type().get(type))) return false;
    if (type == want) return true;
    fail(why);
    e = validate(v, 2);
    return false;
  }

  error_code read_time(od::value& v) {
    if (error_code e{}; !is_a(v, od::json_type::number, "time must be a non-negative integer", e)) return e;
    od::number n;
    if (auto e = v.get_number().get(n)) return e;
    // Integers above INT64_MAX come back as unsigned_integer and are refused with floats and negatives.
    if (n.get_number_type() == od::number_type::signed_integer && n.get_int64() >= 0) out.time = n.get_int64();
    else fail("time must be a non-negative integer");
    return simdjson::SUCCESS;
  }

  error_code read_payload(od::value& v) {
    if (error_code e{}; !is_a(v, od::json_type::object, "payload must be an object", e)) return e;
    // value::raw_json() does not exist in simdjson 3.0.1 and object::raw_json() skips without validating,
    // so the slice runs from the payload's first token to the token after it, less the whitespace between.
    const std::string_view first = v.raw_json_token();
    if (auto e = validate(v, 2)) return e;
    const char* end = nullptr;
    if (auto e = doc_.current_location().get(end)) return e;
    while (end > first.data() && is_json_space(end[-1])) --end;
    out.payload = std::string_view(first.data(), static_cast<std::size_t>(end - first.data()));
    return simdjson::SUCCESS;
  }

  error_code read_error(od::value& v) {
    static constexpr const char* why = "error must be an object with a non-empty string code";
    if (error_code e{}; !is_a(v, od::json_type::object, why, e)) return e;
    od::object object;
    if (auto e = v.get_object().get(object)) return e;
    int codes = 0;
    auto read_member = [&](std::string_view key, od::value& child) -> error_code {
      std::string_view s;
      bool ok = false;
      if (key == "code") {
        if (auto e = read_string(child, s, ok)) return e;
        ++codes;
        if (ok && !s.empty()) out.error_code = s;
        else fail(why);
      } else if (key == "message") {
        if (auto e = read_string(child, s, ok)) return e;
        if (!ok) fail("error.message must be a string");
      } else {
        return validate(child, 3);
      }
      return simdjson::SUCCESS;
    };
    if (auto e = for_each_member(object, read_member)) return e;
    if (codes != 1) fail(why);
    return simdjson::SUCCESS;
  }
};

const char* json_error_message(error_code e) {
  switch (e) {
    case simdjson::EMPTY: return "packet is empty";
    case simdjson::UTF8_ERROR: return "packet is not valid UTF-8";
    case simdjson::DEPTH_ERROR: return "packet nests deeper than 64 levels";
    case simdjson::TRAILING_CONTENT: return "content after the packet object";
    case simdjson::CAPACITY:
    case simdjson::MEMALLOC: return "packet is too large";
    default: return "packet is not valid JSON";
  }
}

}  // namespace

struct packet_decoder::state {
  simdjson::ondemand::parser parser{1 << 20};
  std::string buffer;  // the frame copied with simdjson's padding
};

packet_decoder::packet_decoder() : state_(std::make_unique<state>()) {}
packet_decoder::~packet_decoder() = default;

std::optional<packet_view> packet_decoder::decode(std::string_view frame, packet_error& error) {
  error = packet_error{};
  // The parser is built with a 1 MiB *maximum* capacity, and set_max_capacity() is broken in simdjson 3.0.1
  // (it sets 32 bytes). Frame size is the WebSocket layer's business: a bigger frame gets a parser of its own,
  // which the next small frame gives back, so that one large frame does not pin ~7x its size per session.
  constexpr std::size_t kept = 1 << 20;
  auto& [parser, buffer] = *state_;
  if (frame.size() > parser.max_capacity() || (parser.capacity() > kept && frame.size() <= kept)) {
    parser = simdjson::ondemand::parser(std::max(frame.size(), kept));
    if (buffer.capacity() > kept + simdjson::SIMDJSON_PADDING) buffer = std::string();
  }
  // simdjson reads past the end, and its unbalanced-document check looks at the first padding byte: the
  // padding must be there and blank. assign() keeps the capacity of earlier frames.
  buffer.assign(frame);
  buffer.append(simdjson::SIMDJSON_PADDING, '\0');

  envelope_reader reader;
  const error_code e = reader.read(parser, buffer, frame.size());
  if (!e && !reader.problem) return reader.out;
  error.message = e ? json_error_message(e) : reader.problem;
  if (reader.out.request_id) error.request_id = std::string(*reader.out.request_id);
  if (reader.packet_id) error.packet_id = std::string(*reader.packet_id);
  return std::nullopt;
}

namespace {

}  // namespace

// Appended field by field, in the order the DOM gave: 30 times cheaper than building an envelope object
// (bench/packet_bench.cpp), and the payload is not copied.
std::string encode_packet(const outgoing_packet& packet) {
  std::string out;
  out.reserve(224);
  out += R"({"schema":")";
  out += packet_schema;
  out += '"';
  append_json_member(out, "packet_id", packet.packet_id.empty() ? unique_id("pkt_") : packet.packet_id);
  if (!packet.request_id.empty()) append_json_member(out, "request_id", packet.request_id);
  if (!packet.reply_to.empty()) append_json_member(out, "reply_to", packet.reply_to);
  if (!packet.connector_channel_id.empty()) append_json_member(out, "connector_channel_id", packet.connector_channel_id);
  append_json_member(out, "type", packet.type);
  out += R"(,"time":)";
  out += std::to_string(packet.time_ms < 0 ? static_cast<std::int64_t>(unix_ms()) : packet.time_ms);
  if (packet.payload) {
    out += R"(,"payload":)";
    append_json_value(out, *packet.payload);
    if (!packet.raw_member_name.empty()) {
      out.pop_back();  // the payload's closing brace
      if (!packet.payload->empty()) out += ',';
      append_json_string(out, packet.raw_member_name);
      out += ':';
      out += packet.raw_member_json;
      out += '}';
    }
  }
  if (!packet.error_code.empty()) {
    out += R"(,"error":{"code":)";
    append_json_string(out, packet.error_code);
    out += R"(,"message":)";
    append_json_string(out, packet.error_message);
    out += '}';
  }
  out += '}';
  return out;
}

outgoing_packet reply_to(const packet_view& request, std::string type) {
  outgoing_packet reply;
  reply.type = std::move(type);
  if (request.request_id) reply.request_id = *request.request_id;
  reply.reply_to = request.packet_id;
  if (request.connector_channel_id) reply.connector_channel_id = *request.connector_channel_id;
  return reply;
}

}  // namespace xconn
