#include "core/channels/credential_use.hpp"

namespace xconn {

std::optional<use_refusal> credential_refusal(const channel& c) {
  if (!c.authenticated) return use_refusal{"connection_not_authenticated", false, "the channel is not signed in to the target"};
  if (c.binding_lost())
    return use_refusal{"connection_not_authenticated", false, "the target refused the channel's credential: sign in again"};
  if (c.verifying)
    return use_refusal{"connector_channel_unavailable", true,
                       "the connector is still verifying the channel with the target after a restart"};
  if (c.target_status == "offline" || c.target_status == "error")
    return use_refusal{"connector_channel_unavailable", true, "the target cannot be reached on this channel now"};
  return std::nullopt;
}

}  // namespace xconn
