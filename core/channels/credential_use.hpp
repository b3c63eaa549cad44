// Whether the host may act on a channel's credential now: hand a reply to its plugin, run a tool. A reply on a
// channel whose credential the target refused is refused as its tools are, and never sent with that credential
// (spec §9 connection.status: expired and revoked mean signed out; offline and error mean signed in but
// inactive, so a retry later may go through).
#pragma once

#include "core/channels/channel_table.hpp"

#include <optional>
#include <string_view>

namespace xconn {

struct use_refusal {
  std::string_view code;     // connection_not_authenticated, connector_channel_unavailable
  bool retryable = false;    // true when the same request may succeed later without a new sign-in
  std::string_view message;  // for xAgent; names no credential
};

// nullopt when the channel's credential may be used. A `degraded` report is not a refusal: the target still takes
// what it can, and a plugin learns that it recovered only by trying (the webhook plugin clears degraded on a
// delivery that went through).
std::optional<use_refusal> credential_refusal(const channel& c);

}  // namespace xconn
