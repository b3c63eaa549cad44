#include "core/messaging/inbound_records.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace xconn {

std::string inbound_message_key(std::string_view channel_id, std::uint64_t seq) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, seq);
  return std::string(channel_id) + "/" + hex;
}

std::optional<inbound_message_key_parts> parse_inbound_message_key(std::string_view key) {
  auto slash = key.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  auto hex = key.substr(slash + 1);
  std::uint64_t seq = 0;
  if (hex.size() != 16 || std::sscanf(std::string(hex).c_str(), "%16" SCNx64, &seq) != 1) return std::nullopt;
  return inbound_message_key_parts{std::string(key.substr(0, slash)), seq};
}

std::string inbound_id_key(std::string_view channel_id, std::string_view msg_id) {
  return std::string(channel_id) + "/" + std::string(msg_id);
}

std::string to_record(const inbound_id_record& r) {
  return std::to_string(r.until) + (r.message_id.empty() ? "" : " " + r.message_id);
}

inbound_id_record parse_inbound_id_record(std::string_view value) {
  auto space = value.find(' ');
  inbound_id_record r;
  r.until = std::atoll(std::string(value.substr(0, space)).c_str());
  if (space != std::string_view::npos) r.message_id = value.substr(space + 1);
  return r;
}

}  // namespace xconn
