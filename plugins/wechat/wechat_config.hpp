// The plugin's config section (connectors.wechat): one row per key, every message naming the key, never a value.
#pragma once

#include <xconn/adapter/config_table.hpp>
#include <xconn/adapter/endpoint.hpp>
#include <xconn/adapter/proxy_url.hpp>

#include <string>
#include <string_view>

namespace wechat {

struct settings {
  std::string api_base_url = "https://ilinkai.weixin.qq.com";
  std::string cdn_base_url = "https://novac2c.cdn.weixin.qq.com/c2c";
  std::string ca_file;
  std::string proxy;
};

namespace rule = xconn::adapter::config_rule;

inline bool is_base_url(std::string_view s) { return xconn::adapter::endpoint::parse(s).has_value(); }

inline const xconn::adapter::config_table<settings> config_rows{
    {"config.api_base_url", rule::matching{is_base_url, "must be an http:// or https:// URL"}, &settings::api_base_url},
    {"config.cdn_base_url", rule::matching{is_base_url, "must be an http:// or https:// URL"}, &settings::cdn_base_url},
    {"config.ca_file", rule::file_path(), &settings::ca_file},
    {"config.proxy",
     rule::matching{[](std::string_view s) { return xconn::adapter::proxy_url::parse(s).has_value(); },
                    "must be http://[user:password@]host:port or socks5://[user:password@]host:port"},
     &settings::proxy},
};

}  // namespace wechat
