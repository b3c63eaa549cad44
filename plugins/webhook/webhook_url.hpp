// The receiver's address (the outbound_url form field): http(s)://host[:port][/path][?query], checked strictly.
#pragma once

#include <xconn/adapter/endpoint.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace webhook {

// The endpoint the HTTP client reaches, with its authority as written ("127.0.0.1:8080", "[::1]:9000": the Host
// header and the display_name) and the request target.
struct receiver_url : xconn::adapter::endpoint {
  std::string target;  // path and query, "/" when empty

  // nullopt when url is not http(s)://host[:port][/path][?query] of at most 2,048 bytes with no blank, control
  // character, user info or fragment.
  static std::optional<receiver_url> parse(std::string_view url);
};

inline std::optional<receiver_url> receiver_url::parse(std::string_view url) {
  if (url.empty() || url.size() > 2048) return std::nullopt;
  for (unsigned char c : url)
    if (c <= 0x20 || c == 0x7f || c == '#' || c == '\\' || c >= 0x80) return std::nullopt;
  receiver_url u;
  if (url.starts_with("https://")) {
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    u.tls = false;
    url.remove_prefix(7);
  } else {
    return std::nullopt;
  }
  auto end = url.find_first_of("/?");
  auto authority = url.substr(0, end);
  u.target = end == std::string_view::npos ? "/" : std::string(url.substr(end));
  if (u.target.front() == '?') u.target.insert(0, "/");
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  u.authority = std::string(authority);
  std::string_view host = authority, port;
  if (authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos || close < 2) return std::nullopt;
    host = authority.substr(1, close - 1);
    auto rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      if (port.empty()) return std::nullopt;
    }
    if (host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) return std::nullopt;
  } else {
    auto colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) return std::nullopt;
    }
    if (host.empty()) return std::nullopt;
    for (char c : host)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_'))
        return std::nullopt;
  }
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    auto n = std::stoi(std::string(port));
    if (n < 1 || n > 65535) return std::nullopt;
  }
  u.host = std::string(host);
  u.port = port.empty() ? (u.tls ? "443" : "80") : std::string(port);
  return u;
}

}  // namespace webhook
