// The latest triggering message delivered on a channel: where a reply goes (plugin.h on_send). The inbound side
// records it; the outbound side reads it through last_inbound_fn, so neither includes the other.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace xconn {

struct last_inbound {
  std::string channel_key;
  std::string message_id;  // the target's msg_id ("" when the plugin gave none)
  std::string sender_id;
  std::string sender_name;
  std::string role;

  bool operator==(const last_inbound&) const = default;
};

using last_inbound_fn = std::function<std::optional<last_inbound>(std::string_view channel_id)>;

}  // namespace xconn
