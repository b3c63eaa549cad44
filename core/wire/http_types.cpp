#include "core/wire/http_types.hpp"

#include <boost/beast/http/rfc7230.hpp>
#include <boost/json.hpp>

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
