// The plugin's config section (connectors.telegram): checked key by key, every message naming the key, never a value.
#pragma once

#include "api_endpoint.hpp"
#include "proxy_url.hpp"

#include <boost/json.hpp>

#include <string>

namespace telegram {

struct settings {
  std::string api_base_url = "https://api.telegram.org";
  std::string ca_file;
  std::string proxy;
  int poll_timeout_s = 30;
};

// Messages name the key, never a value.
inline std::string check_section(const boost::json::object& section, settings* out) {
  for (const auto& group : section) {
    std::string name(group.key());
    if (name != "auth" && name != "config" && name != "route" && name != "policy") return name + ": unknown group";
    if (!group.value().is_object()) return name + ": must be an object";
    for (const auto& entry : group.value().as_object()) {
      std::string key = name + "." + std::string(entry.key());
      const auto& v = entry.value();
      if (key == "config.api_base_url") {
        if (!v.is_string() || !api_endpoint::parse(v.as_string())) return key + ": must be an http:// or https:// URL";
        if (out) out->api_base_url = v.as_string();
      } else if (key == "config.ca_file") {
        if (!v.is_string()) return key + ": must be a file path";
        if (out) out->ca_file = v.as_string();
      } else if (key == "config.poll_timeout_s") {
        if (!v.is_int64() || v.as_int64() < 1 || v.as_int64() > 50) return key + ": must be an integer 1..50";
        if (out) out->poll_timeout_s = static_cast<int>(v.as_int64());
      } else if (key == "config.proxy") {
        if (!v.is_string() || !proxy_url::parse(v.as_string()))
          return key + ": must be http://[user:password@]host:port or socks5://[user:password@]host:port";
        if (out) out->proxy = v.as_string();
      } else {
        return key + ": unknown key";
      }
    }
  }
  return "";
}

}  // namespace telegram
