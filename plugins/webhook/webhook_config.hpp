// The plugin's config section (connectors.webhook): one row per key, every message naming the key, never a value.
#pragma once

#include <xconn/adapter/config_table.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <string>

namespace webhook {

// The host reads at most 1 MiB of a request to a plugin route (docs/protocol.md "Plugin routes") and answers 413 itself
// above it; a larger policy.max_body_bytes could never be honoured, so it is refused.
inline constexpr std::int64_t host_body_cap = 1 << 20;

struct settings {
  std::string ca_file;                         // config.ca_file: extra PEM CAs for https receivers
  std::int64_t max_body_bytes = host_body_cap;  // policy.max_body_bytes: 413 above it
  int send_budget_s = 25;                      // policy.send_budget_s: a final's tries, all told (< delivery.send_timeout_s)
  int attempt_timeout_s = 10;                  // policy.attempt_timeout_s: one POST to the receiver
  // policy.replay_keep_s and policy.replay_keep_max bounded the plugin's own msg_id index, which is gone (the host
  // answers a replay for delivery.expiry_s): still accepted, with their old ranges, so that existing configs load.
  int replay_keep_s = 86400;
  int replay_keep_max = 20000;
};

namespace rule = xconn::adapter::config_rule;

inline const xconn::adapter::config_table<settings> config_rows{
    {"config.ca_file", rule::file_path(false), &settings::ca_file},
    {"policy.max_body_bytes", rule::integer(1, host_body_cap, " (the host's own cap)"), &settings::max_body_bytes},
    {"policy.send_budget_s", rule::integer(1, 300), &settings::send_budget_s},
    {"policy.attempt_timeout_s", rule::integer(1, 60), &settings::attempt_timeout_s},
    {"policy.replay_keep_s", rule::integer(60, 604800), &settings::replay_keep_s},
    {"policy.replay_keep_max", rule::integer(100, 20000), &settings::replay_keep_max},
};

}  // namespace webhook
