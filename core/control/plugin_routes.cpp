#include "core/control/plugin_routes.hpp"

#include "core/control/control_plane.hpp"

#include <boost/json.hpp>

namespace xconn {
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// The plugin's {"status","content_type","body"} as a response, or 502 when it is not that.
http_response to_response(const http_request& req, const call_result& r) {
  if (r.timed_out) return error_response(req, http::status::gateway_timeout, "plugin_timeout", "the connector did not answer in time");
  if (!r.ok) return error_response(req, http::status::bad_gateway, "plugin_failed", "the connector failed to answer");
  boost::system::error_code ec;
  auto v = json::parse(r.json, ec);
  const json::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
  auto* status = o ? o->if_contains("status") : nullptr;
  auto* body = o ? o->if_contains("body") : nullptr;
  auto* type = o ? o->if_contains("content_type") : nullptr;
  if (!status || !status->is_int64() || status->as_int64() < 100 || status->as_int64() > 599 ||
      (body && !body->is_string()) || (type && !type->is_string()))
    return error_response(req, http::status::bad_gateway, "invalid_plugin_result", "the connector's answer was malformed");
  http_response res{static_cast<http::status>(status->as_int64()), req.version()};
  res.set(http::field::server, "xconn");
  res.set(http::field::content_type, type ? std::string_view(type->as_string()) : std::string_view("application/json"));
  res.keep_alive(req.keep_alive());
  if (body) res.body() = body->as_string();
  res.prepare_payload();
  return res;
}

}  // namespace

bool serve_plugin_route(server_context& ctx, const http_request& req, std::function<void(http_response)> reply) {
  auto parts = split_connector_path(req.target());
  if (parts.plugin_id.empty() || parts.rest.empty()) return false;
  auto conn = ctx.connectors.find(parts.plugin_id);
  auto manifest = conn ? conn->manifest() : nullptr;
  if (!manifest || !manifest->has_route_path(parts.rest)) return false;
  const auto* route = manifest->find_route(std::string_view(req.method_string()), parts.rest);
  if (!route || !route->is_public) {
    // Before the method is revealed, the caller must be one who may know the route exists.
    if (!authorized(ctx, req)) {
      reply(error_response(req, http::status::unauthorized, "unauthorized",
                           "a valid API key is required (Authorization: Bearer <key>)"));
      return true;
    }
  }
  if (!route) {
    reply(error_response(req, http::status::method_not_allowed, "method_not_allowed", "this route takes another method"));
    return true;
  }
  std::string target(req.target());
  auto q = target.find('?');
  std::string path(parts.rest);
  std::string query = q == std::string::npos ? std::string() : target.substr(q + 1);
  std::string method(req.method_string());
  std::string body = req.body();
  conn->http(
      std::move(method), std::move(path), std::move(query), std::move(body), conn->make_strand(), plugin_route_timeout,
      [req_head = http_request(req.base()), reply = std::move(reply)](call_result r) {
        reply(to_response(req_head, r));
      });
  return true;
}

}  // namespace xconn
