// Where a target's HTTP server is: scheme, host, port and a base path, read from "http(s)://host[:port][/path]"
// (a configured API base URL) or filled in by an adapter that parsed its own URL form. The HTTP client keeps one
// pool of connections per scheme, host and port.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace xconn::adapter {

struct endpoint {
  bool tls = true;
  std::string host;       // without brackets: "::1", "api.example.com"
  std::string port;       // "443" or "80" when not written
  std::string base_path;  // "" or "/prefix", no trailing slash
  std::string authority;  // the Host header: "example.com", "127.0.0.1:8080", "[::1]:9000"

  // nullopt when url is not http(s)://host[:port][/path] (no query, no blanks).
  static std::optional<endpoint> parse(std::string_view url);

  // The Host header for host and port: the port only when it is not the scheme's own, an IPv6 host in brackets.
  static std::string authority_of(bool tls, const std::string& host, const std::string& port) {
    auto shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return port == (tls ? "443" : "80") ? shown : shown + ":" + port;
  }
  // The pool key: scheme, host and port.
  std::string pool_key() const { return (tls ? "https " : "http ") + host + " " + port; }
};

inline std::optional<endpoint> endpoint::parse(std::string_view url) {
  endpoint e;
  if (url.starts_with("https://")) {
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    e.tls = false;
    url.remove_prefix(7);
  } else {
    return std::nullopt;
  }
  auto slash = url.find('/');
  auto authority = url.substr(0, slash);
  e.base_path = slash == std::string_view::npos ? "" : std::string(url.substr(slash));
  while (!e.base_path.empty() && e.base_path.back() == '/') e.base_path.pop_back();
  auto colon = authority.rfind(':');
  bool bracketed = authority.starts_with('[');
  if (colon != std::string_view::npos && (!bracketed || authority[colon - 1] == ']')) {
    e.host = std::string(authority.substr(0, colon));
    e.port = std::string(authority.substr(colon + 1));
  } else {
    e.host = std::string(authority);
    e.port = e.tls ? "443" : "80";
  }
  if (e.host.size() >= 2 && e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  if (e.host.empty() || e.port.empty() || e.port.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  for (char c : e.host)
    if (static_cast<unsigned char>(c) <= 0x20 || c == '/' || c == '?' || c == '#' || c == '@') return std::nullopt;
  for (char c : e.base_path)
    if (static_cast<unsigned char>(c) <= 0x20 || c == '?' || c == '#') return std::nullopt;
  e.authority = authority_of(e.tls, e.host, e.port);
  return e;
}

}  // namespace xconn::adapter
