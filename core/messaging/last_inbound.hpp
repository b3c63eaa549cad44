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

// What LMDB keeps of it (inbound_service::last_db): routing facts only, never the text. nullopt when unreadable.
std::string last_inbound_record(const last_inbound& l);
std::optional<last_inbound> last_inbound_from_record(std::string_view text);

using last_inbound_fn = std::function<std::optional<last_inbound>(std::string_view channel_id)>;

}  // namespace xconn
