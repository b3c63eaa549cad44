// connector.hello negotiation (spec §8.1-8.2, §12; docs/protocol.md "Data plane"): pure rules, no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

struct protocol_version_number {
  int major = 0;
  int minor = 0;
};

// "MAJOR.MINOR" compared numerically; a missing minor is 0, parts after the minor are ignored; anything
// else (empty, signs, letters, a missing major) is nullopt.
std::optional<protocol_version_number> parse_protocol_version(std::string_view text);

// The outcome of a hello: either a rejection (error code and message, then close 1008) or the accepted
// connector id request and the enabled profiles.
struct hello_outcome {
  std::string error_code;  // empty when accepted
  std::string error_message;
  std::string requested_connector_id;
  std::vector<std::string> profiles;  // card supports.profiles ∩ supported_profiles, in card order
};

// payload_json: the raw payload object (or empty when the packet had none).
hello_outcome negotiate_hello(std::string_view payload_json, std::string_view card_id,
                              const std::vector<std::string>& card_profiles);

}  // namespace xconn
