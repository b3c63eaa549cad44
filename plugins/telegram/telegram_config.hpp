// The plugin's config section (connectors.telegram): checked key by key, every message naming the key, never a value.
#pragma once

#include "api_endpoint.hpp"
#include "proxy_url.hpp"
#include "kit/config_section.hpp"

#include <boost/json.hpp>

#include <optional>
#include <string>

namespace telegram {

struct settings {
  std::string api_base_url = "https://api.telegram.org";
  std::string ca_file;
  std::string proxy;
  int poll_timeout_s = 30;
};

// Messages name the key, never a value. out: where the values go (nullptr to check only).
inline std::string check_section(const boost::json::object& section, settings* out) {
  return xconn::kit::check_section(section, [out](const std::string& key, const boost::json::value& v)
                                                -> std::optional<std::string> {
    if (key == "config.api_base_url") {
      if (!v.is_string() || !api_endpoint::parse(v.as_string())) return "must be an http:// or https:// URL";
      if (out) out->api_base_url = v.as_string();
      return "";
    }
    if (key == "config.ca_file") {
      if (!v.is_string()) return "must be a file path";
      if (out) out->ca_file = v.as_string();
      return "";
    }
    if (key == "config.poll_timeout_s") return xconn::kit::integer_in(v, 1, 50, out ? &out->poll_timeout_s : nullptr);
    if (key == "config.proxy") {
      if (!v.is_string() || !proxy_url::parse(v.as_string()))
        return "must be http://[user:password@]host:port or socks5://[user:password@]host:port";
      if (out) out->proxy = v.as_string();
      return "";
    }
    return std::nullopt;
  });
}

}  // namespace telegram
