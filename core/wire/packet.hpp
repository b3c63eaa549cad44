// The data-plane packet envelope (spec §7, schema xagent.connector.packet/v1): reading incoming frames
// with simdjson on-demand (no DOM; the payload stays a raw slice), and writing outgoing packets.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace xconn {

inline constexpr std::string_view packet_schema = "xagent.connector.packet/v1";

// An incoming packet. Every view points into the decoder's buffers and stays valid until its next decode.
struct packet_view {
  std::string_view packet_id;
  std::string_view type;
  std::optional<std::string_view> request_id;
  std::optional<std::string_view> reply_to;
  std::optional<std::string_view> connector_channel_id;
  std::optional<std::int64_t> time;
  std::optional<std::string_view> payload;  // raw JSON text of the payload object, when present
  std::optional<std::string_view> error_code;
};

// Why a frame is not a valid packet; the ids are echoed in the `invalid_packet` error when readable.
struct packet_error {
  std::string message;                  // short, never quotes the frame
  std::optional<std::string> request_id;
  std::optional<std::string> packet_id;
};

// Reads frames, one at a time. Not thread-safe: one decoder per WebSocket session.
class packet_decoder {
 public:
  static constexpr std::size_t max_depth = 64;  // deeper nesting is refused as invalid_packet

  packet_decoder();
  ~packet_decoder();

  // Checks the envelope: schema is the packet schema, packet_id and type are non-empty strings,
  // request_id / reply_to / connector_channel_id are strings, time a non-negative integer, payload and
  // error objects; duplicate envelope keys and trailing content are refused. Returns nullopt and fills
  // error when the frame is not a valid packet.
  std::optional<packet_view> decode(std::string_view frame, packet_error& error);

 private:
  struct state;  // the simdjson parser and the padded frame: simdjson stays out of this header
  std::unique_ptr<state> state_;
};

// The fields of an outgoing packet; encode() adds `schema`, a fresh `packet_id` (`pkt_` + random) and
// `time` (unix ms) unless given.
struct outgoing_packet {
  std::string type;
  std::string request_id;            // omitted when empty
  std::string reply_to;              // omitted when empty
  std::string connector_channel_id;  // omitted when empty
  std::optional<boost::json::object> payload;
  // One more payload member whose value is JSON text already checked (a plugin's tool result): appended as it is,
  // after payload's own members, with no DOM built for it. Needs payload.
  std::string raw_member_name;
  std::string raw_member_json;
  std::string error_code;            // with error_message: the envelope `error`; omitted when empty
  std::string error_message;
  std::string packet_id;             // generated when empty
  std::int64_t time_ms = -1;         // now when negative
};

std::string encode_packet(const outgoing_packet& packet);

// An ack or error answering request: echoes its request_id and sets reply_to to its packet_id.
outgoing_packet reply_to(const packet_view& request, std::string type);

}  // namespace xconn
