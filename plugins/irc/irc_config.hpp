// The plugin's config section (connectors.irc): checked key by key, every message naming the key, never a value.
#pragma once

#include <boost/json.hpp>

#include <string>

namespace irc {

struct settings {
  std::string ca_file;         // extra trusted CA certificates (PEM) for tls=true servers, beside the system store
  int connect_timeout_s = 15;  // a connection and its registration
  int lines_per_second = 2;    // flood control, per connection
};

inline std::string check_section(const boost::json::object& section, settings* out) {
  for (const auto& group : section) {
    std::string name(group.key());
    if (name != "auth" && name != "config" && name != "route" && name != "policy") return name + ": unknown group";
    if (!group.value().is_object()) return name + ": must be an object";
    for (const auto& entry : group.value().as_object()) {
      std::string key = name + "." + std::string(entry.key());
      const auto& v = entry.value();
      auto integer_in = [&](int low, int high, int* target) -> std::string {
        if (!v.is_int64() || v.as_int64() < low || v.as_int64() > high)
          return key + ": must be an integer " + std::to_string(low) + ".." + std::to_string(high);
        if (out) *target = static_cast<int>(v.as_int64());
        return "";
      };
      std::string why;
      if (key == "config.ca_file") {
        if (!v.is_string()) return key + ": must be a file path";
        if (out) out->ca_file = v.as_string();
      } else if (key == "config.connect_timeout_s") {
        why = integer_in(1, 120, out ? &out->connect_timeout_s : nullptr);
      } else if (key == "policy.lines_per_second") {
        why = integer_in(1, 20, out ? &out->lines_per_second : nullptr);
      } else {
        return key + ": unknown key";
      }
      if (!why.empty()) return why;
    }
  }
  return "";
}

}  // namespace irc
