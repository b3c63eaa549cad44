#include "core/wire/http_types.hpp"

#include <boost/beast/http/rfc7230.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <charconv>

namespace xconn {
namespace http = boost::beast::http;

bool keeps_alive(const http_request_header& req) {
  auto it = req.find(http::field::connection);
  if (it == req.end()) return req.version() >= 11;
  http::token_list tokens(it->value());
  return req.version() >= 11 ? !tokens.exists("close") : tokens.exists("keep-alive");
}

http_response json_response(const http_request_header& req, http::status status, std::string body) {
  http_response res{status, req.version()};
  res.set(http::field::server, "xconn");
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.keep_alive(keeps_alive(req));
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

http_response error_response(const http_request_header& req, http::status status, std::string_view code,
                             std::string_view message) {
  boost::json::object body{{"error", {{"code", code}, {"message", message}}}};
  auto res = json_response(req, status, boost::json::serialize(body));
  if (status == http::status::unauthorized) res.set(http::field::www_authenticate, "Bearer");
  return res;
}

std::string_view query_param(std::string_view target, std::string_view name) {
  auto q = target.find('?');
  if (q == std::string_view::npos) return {};
  auto query = target.substr(q + 1);
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return {};
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  if (s.empty() || s.size() > 19) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<byte_range> parse_range(std::string_view header, std::uint64_t size) {
  constexpr std::string_view unit = "bytes=";
  if (header.substr(0, unit.size()) != unit || header.find(',') != std::string_view::npos) return std::nullopt;
  header.remove_prefix(unit.size());
  auto dash = header.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto from = header.substr(0, dash), to = header.substr(dash + 1);
  if (from.empty()) {  // the last n bytes
    auto n = parse_u64(to);
    if (!n) return std::nullopt;
    if (*n == 0 || size == 0) return byte_range{1, 0};
    return byte_range{size - std::min(*n, size), size - 1};
  }
  auto first = parse_u64(from);
  if (!first) return std::nullopt;
  std::uint64_t last = size == 0 ? 0 : size - 1;
  if (!to.empty()) {
    auto end = parse_u64(to);
    if (!end || *end < *first) return std::nullopt;
    last = std::min(*end, last);
  }
  if (*first >= size) return byte_range{1, 0};
  return byte_range{*first, last};
}

connector_path split_connector_path(std::string_view target) {
  target = target.substr(0, target.find('?'));
  constexpr std::string_view prefix = "/connectors/";
  if (target.substr(0, prefix.size()) != prefix) return {};
  target.remove_prefix(prefix.size());
  auto slash = target.find('/');
  if (slash == std::string_view::npos) return {target, ""};
  return {target.substr(0, slash), target.substr(slash)};
}

}  // namespace xconn
