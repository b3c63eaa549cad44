#include "core/wire/hello.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>

namespace xconn {
namespace json = boost::json;

namespace {

std::optional<int> parse_number(std::string_view s) {
  if (s.empty() || s.size() > 9 || s.front() < '0' || s.front() > '9') return std::nullopt;  // no sign
  int out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return out;
}

hello_outcome reject(std::string code, std::string message) {
  hello_outcome out;
  out.error_code = std::move(code);
  out.error_message = std::move(message);
  return out;
}

}  // namespace

std::optional<protocol_version_number> parse_protocol_version(std::string_view text) {
  auto dot = text.find('.');
  auto major = parse_number(text.substr(0, dot));
  if (!major) return std::nullopt;
  if (dot == std::string_view::npos) return protocol_version_number{*major, 0};
  auto rest = text.substr(dot + 1);
  auto minor = parse_number(rest.substr(0, rest.find('.')));
  if (!minor) return std::nullopt;
  return protocol_version_number{*major, *minor};
}

hello_outcome negotiate_hello(std::string_view payload_json, std::string_view card_id,
                              const std::vector<std::string>& card_profiles) {
  json::object payload;
  if (!payload_json.empty()) {
    boost::system::error_code ec;
    auto v = json::parse(payload_json, ec);
    if (ec || !v.is_object()) return reject("invalid_packet", "payload must be an object");
    payload = std::move(v.as_object());
  }
  auto* version = payload.if_contains("protocol_version");
  if (!version || !version->is_string())
    return reject("protocol_version_unsupported", "protocol_version is required; this connector speaks 3.0");
  auto parsed = parse_protocol_version(version->as_string());
  if (!parsed) return reject("protocol_version_unsupported", "protocol_version is malformed; expected MAJOR.MINOR");
  if (parsed->major < 3)
    return reject("protocol_version_unsupported", "protocol_version below 3.0 is not supported");

  auto* supported = payload.if_contains("supported_profiles");
  if (!supported || !supported->is_array())
    return reject("invalid_packet", "supported_profiles is required (an array of profile ids)");
  std::vector<std::string_view> offered;
  for (const auto& p : supported->as_array()) {
    if (!p.is_string()) return reject("invalid_packet", "supported_profiles must hold strings");
    offered.push_back(p.as_string());
  }

  auto* card = payload.if_contains("connector_card_id");
  if (!card || !card->is_string() || card->as_string() != card_id)
    return reject("connector_card_id_mismatch", "connector_card_id does not match this connector's card");

  hello_outcome out;
  for (const auto& p : card_profiles)
    if (std::find(offered.begin(), offered.end(), p) != offered.end()) out.profiles.push_back(p);
  if (out.profiles.empty())
    return reject("profile_not_supported", "none of supported_profiles is declared by this connector's card");

  if (auto* id = payload.if_contains("connector_id")) {
    if (id->is_string()) out.requested_connector_id = id->as_string();
    else if (!id->is_null()) return reject("invalid_packet", "connector_id must be a string");
  }
  return out;
}

}  // namespace xconn
