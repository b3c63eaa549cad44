// Connection descriptors (xagent.connection/v2, spec §9): built from a channel and its plugin's binding, and
// checked against the spec's hard rules before one leaves the host.
#pragma once

#include "core/channels/channel_table.hpp"
#include "core/plugin_host/connector.hpp"
#include "core/plugin_host/plugin_manifest.hpp"

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace xconn {

inline constexpr std::string_view descriptor_schema = "xagent.connection/v2";

struct descriptor_input {
  const plugin_manifest& manifest;
  const channel& chan;
  const std::vector<std::string>& profiles;  // negotiated on the socket that routes the channel
  health_state health = health_state::healthy;
  bool auth_running = false;
};

boost::json::object build_descriptor(const descriptor_input& in);

// connection.status (spec §9) of a channel: its sign-in, its plugin's health and its plugin's report.
std::string connection_status(const channel& c, health_state health, bool auth_running);

// The spec's hard validation plus xconn's own (display-level target, tools from the card). "" when valid.
std::string descriptor_violation(const boost::json::object& descriptor, const plugin_manifest& manifest,
                                 std::string_view channel_id);

// The status a tool has on a channel, as the descriptor shows it ("available", ...).
std::string_view tool_status(const descriptor_input& in, std::string_view tool_id);

// Checks a binding from a plugin: display_name / account_hint strings, tools entries naming card tools with
// the spec's values, nothing else. "" when valid.
std::string binding_violation(const boost::json::object& binding, const plugin_manifest& manifest);

}  // namespace xconn
