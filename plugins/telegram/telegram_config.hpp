// The plugin's config section (connectors.telegram): one row per key, every message naming the key, never a value.
#pragma once

#include "api_endpoint.hpp"
#include "proxy_url.hpp"

#include <xconn/adapter/config_table.hpp>

#include <boost/json.hpp>

#include <string>
#include <string_view>

namespace telegram {

struct settings {
  std::string api_base_url = "https://api.telegram.org";
  std::string ca_file;
  std::string proxy;
  int poll_timeout_s = 30;
};

namespace rule = xconn::adapter::config_rule;

inline const xconn::adapter::config_table<settings> config_rows{
    {"config.api_base_url",
     rule::matching{[](std::string_view s) { return api_endpoint::parse(s).has_value(); },
                    "must be an http:// or https:// URL"},
     &settings::api_base_url},
    {"config.ca_file", rule::file_path(), &settings::ca_file},
    {"config.poll_timeout_s", rule::integer(1, 50), &settings::poll_timeout_s},
    {"config.proxy",
     rule::matching{[](std::string_view s) { return proxy_url::parse(s).has_value(); },
                    "must be http://[user:password@]host:port or socks5://[user:password@]host:port"},
     &settings::proxy},
};

}  // namespace telegram
