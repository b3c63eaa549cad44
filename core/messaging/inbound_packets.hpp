// How an inbound message looks on the wire (docs/protocol.md "Inbound messages"): chat.message for a socket that
// negotiated xagent.im.v2, message.push with IM v1 §5's fields for one that negotiated only xagent.im.v1.
#pragma once

#include "core/messaging/inbox.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

// Context that rides with one message is capped, oldest dropped first, so the packet fits a frame.
inline constexpr std::size_t max_context_bytes = 256 * 1024;

struct inbound_wire {
  std::string channel_id;
  std::string provider;      // the card's target provider (message.push)
  bool context_in_text = true;  // delivery.context_in_text: quote the context ahead of the text too
  std::function<std::string(std::string_view file_ref)> download_url;  // signed now, for this delivery
  // message.push (IM v1 §5): the source's label, the connector's skill, its IM v1 tools and the one that replies
  // (the first with side effects; "" when none).
  std::string label;
  std::string skill;
  std::vector<std::string> v1_tools;
  std::string reply_tool;
};

std::string chat_message_packet(const inbound_wire& wire, const inbound_message& m,
                                const std::vector<const inbound_message*>& context);
std::string message_push_packet(const inbound_wire& wire, const inbound_message& m,
                                const std::vector<const inbound_message*>& context);

}  // namespace xconn
