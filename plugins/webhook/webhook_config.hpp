// The plugin's config section (connectors.webhook): checked key by key, every message naming the key, never a value.
#pragma once

#include "kit/config_section.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
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

// out: where the values go (nullptr to check only).
inline std::string check_section(const boost::json::object& section, settings* out) {
  using xconn::kit::integer_in;
  return xconn::kit::check_section(section, [out](const std::string& key, const boost::json::value& v)
                                                -> std::optional<std::string> {
    if (key == "config.ca_file") {
      if (!v.is_string() || v.as_string().empty()) return "must be a file path";
      if (out) out->ca_file = v.as_string();
      return "";
    }
    if (key == "policy.max_body_bytes") {
      auto why = integer_in(v, 1, host_body_cap, out ? &out->max_body_bytes : nullptr);
      return why.empty() ? why : why + " (the host's own cap)";
    }
    if (key == "policy.send_budget_s") return integer_in(v, 1, 300, out ? &out->send_budget_s : nullptr);
    if (key == "policy.attempt_timeout_s") return integer_in(v, 1, 60, out ? &out->attempt_timeout_s : nullptr);
    if (key == "policy.replay_keep_s") return integer_in(v, 60, 604800, out ? &out->replay_keep_s : nullptr);
    if (key == "policy.replay_keep_max") return integer_in(v, 100, 20000, out ? &out->replay_keep_max : nullptr);
    return std::nullopt;
  });
}

}  // namespace webhook
