// How the inbound service keeps its facts in LMDB: the keys of a queued message and of a taken msg_id, and what a
// msg_id's record holds. The databases themselves are named in inbound_service.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xconn {

// <channel>/<seq as 16 hex digits>: one channel's messages are adjacent and in order.
std::string inbound_message_key(std::string_view channel_id, std::uint64_t seq);
struct inbound_message_key_parts {
  std::string channel_id;
  std::uint64_t seq = 0;
};
std::optional<inbound_message_key_parts> parse_inbound_message_key(std::string_view key);

// <channel>/<msg_id>.
std::string inbound_id_key(std::string_view channel_id, std::string_view msg_id);

// A taken msg_id: "<end of its window, unix ms> <the first message_id>", so that a duplicate is answered with that
// id after a restart too. A record of an older build holds the number alone (message_id "").
struct inbound_id_record {
  long long until = 0;
  std::string message_id;
};
std::string to_record(const inbound_id_record& r);
inbound_id_record parse_inbound_id_record(std::string_view value);

}  // namespace xconn
