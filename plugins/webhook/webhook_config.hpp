// The plugin's config section (connectors.webhook): checked key by key, every message naming the key, never a value.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <string>

namespace webhook {

// The host reads at most 1 MiB of a request to a plugin route (protocol.md "Plugin routes") and answers 413 itself
// above it; a larger policy.max_body_bytes could never be honoured, so it is refused.
inline constexpr std::int64_t host_body_cap = 1 << 20;

struct settings {
  std::string ca_file;                         // config.ca_file: extra PEM CAs for https receivers
  std::int64_t max_body_bytes = host_body_cap;  // policy.max_body_bytes: 413 above it
  int send_budget_s = 25;                      // policy.send_budget_s: a final's tries, all told (< delivery.send_timeout_s)
  int attempt_timeout_s = 10;                  // policy.attempt_timeout_s: one POST to the receiver
  int replay_keep_s = 86400;                   // policy.replay_keep_s: how long a msg_id answers its first message_id
  int replay_keep_max = 20000;                 // policy.replay_keep_max: how many msg_ids are kept at most
};

inline std::string check_section(const boost::json::object& section, settings* out) {
  auto integer = [](const boost::json::value& v, std::int64_t low, std::int64_t high) {
    return v.is_int64() && v.as_int64() >= low && v.as_int64() <= high;
  };
  for (const auto& group : section) {
    std::string name(group.key());
    if (name != "auth" && name != "config" && name != "route" && name != "policy") return name + ": unknown group";
    if (!group.value().is_object()) return name + ": must be an object";
    for (const auto& entry : group.value().as_object()) {
      std::string key = name + "." + std::string(entry.key());
      const auto& v = entry.value();
      if (key == "config.ca_file") {
        if (!v.is_string() || v.as_string().empty()) return key + ": must be a file path";
        if (out) out->ca_file = v.as_string();
      } else if (key == "policy.max_body_bytes") {
        if (!integer(v, 1, host_body_cap)) return key + ": must be an integer 1..1048576 (the host's own cap)";
        if (out) out->max_body_bytes = v.as_int64();
      } else if (key == "policy.send_budget_s") {
        if (!integer(v, 1, 300)) return key + ": must be an integer 1..300";
        if (out) out->send_budget_s = static_cast<int>(v.as_int64());
      } else if (key == "policy.attempt_timeout_s") {
        if (!integer(v, 1, 60)) return key + ": must be an integer 1..60";
        if (out) out->attempt_timeout_s = static_cast<int>(v.as_int64());
      } else if (key == "policy.replay_keep_s") {
        if (!integer(v, 60, 604800)) return key + ": must be an integer 60..604800";
        if (out) out->replay_keep_s = static_cast<int>(v.as_int64());
      } else if (key == "policy.replay_keep_max") {
        if (!integer(v, 100, 20000)) return key + ": must be an integer 100..20000";
        if (out) out->replay_keep_max = static_cast<int>(v.as_int64());
      } else {
        return key + ": unknown key";
      }
    }
  }
  return "";
}

}  // namespace webhook
