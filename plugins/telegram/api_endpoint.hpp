// Where the Bot API is: "https://api.telegram.org" or, for tests, "http://127.0.0.1:PORT" (config.api_base_url).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace telegram {

struct api_endpoint {
  bool tls = true;
  std::string host;
  std::string port;
  std::string base_path;  // "" or "/prefix", no trailing slash

  // nullopt when url is not http(s)://host[:port][/path] (no query, no blanks).
  static std::optional<api_endpoint> parse(std::string_view url);
};

inline std::optional<api_endpoint> api_endpoint::parse(std::string_view url) {
  api_endpoint e;
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
  for (char c : e.base_path)
    if (static_cast<unsigned char>(c) <= 0x20 || c == '?' || c == '#') return std::nullopt;
  return e;
}

}  // namespace telegram
