// The plugin's config section (connectors.irc): checked key by key, every message naming the key, never a value.
#pragma once

#include "kit/config_section.hpp"

#include <boost/json.hpp>

#include <optional>

#include <string>

namespace irc {

struct settings {
  std::string ca_file;         // extra trusted CA certificates (PEM) for tls=true servers, beside the system store
  int connect_timeout_s = 15;  // a connection and its registration
  int lines_per_second = 2;    // flood control, per connection
};

// out: where the values go (nullptr to check only).
inline std::string check_section(const boost::json::object& section, settings* out) {
  return xconn::kit::check_section(section, [out](const std::string& key, const boost::json::value& v)
                                                -> std::optional<std::string> {
    if (key == "config.ca_file") {
      if (!v.is_string()) return "must be a file path";
      if (out) out->ca_file = v.as_string();
      return "";
    }
    if (key == "config.connect_timeout_s") return xconn::kit::integer_in(v, 1, 120, out ? &out->connect_timeout_s : nullptr);
    if (key == "policy.lines_per_second") return xconn::kit::integer_in(v, 1, 20, out ? &out->lines_per_second : nullptr);
    return std::nullopt;
  });
}

}  // namespace irc
