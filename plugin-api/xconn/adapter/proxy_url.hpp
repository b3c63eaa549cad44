// A proxy every request of an HTTP client tunnels through: "http://[user:password@]host:port" (a CONNECT tunnel,
// RFC 9110) or "socks5://[user:password@]host:port" (RFC 1928, with RFC 1929 user/password when given; the proxy
// resolves the target's host name). TLS to the target stays end to end.
#pragma once

#include <xconn/adapter/endpoint.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace xconn::adapter {

struct proxy_url {
  enum class kind { http, socks5 };
  kind type = kind::http;
  std::string host;
  std::string port;
  std::string user;      // "" for none
  std::string password;  // a secret: never logged or quoted

  // nullopt unless url is http:// or socks5:// with a host, a port and nothing after it; a user and password are
  // each 1..255 bytes (SOCKS5 carries each length in one byte).
  static std::optional<proxy_url> parse(std::string_view url);
};

inline std::optional<proxy_url> proxy_url::parse(std::string_view url) {
  proxy_url p;
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("socks5://")) {
    p.type = kind::socks5;
    rest = url.substr(9);
  } else {
    return std::nullopt;
  }
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    auto userinfo = rest.substr(0, at);
    rest.remove_prefix(at + 1);
    auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    p.user = std::string(userinfo.substr(0, colon));
    p.password = std::string(userinfo.substr(colon + 1));
    if (p.user.empty() || p.user.size() > 255 || p.password.empty() || p.password.size() > 255) return std::nullopt;
  }
  // The host and port are read the way an endpoint's are; a proxy URL has no path and names its port.
  auto at = endpoint::parse("http://" + std::string(rest));
  auto colon = rest.rfind(':');
  auto bracket = rest.rfind(']');
  if (!at || !at->base_path.empty() || rest.find('/') != std::string_view::npos || colon == std::string_view::npos ||
      (bracket != std::string_view::npos && colon < bracket))
    return std::nullopt;
  p.host = at->host;
  p.port = at->port;
  return p;
}

}  // namespace xconn::adapter
