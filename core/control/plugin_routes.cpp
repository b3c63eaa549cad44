#include "core/control/plugin_routes.hpp"

#include "core/context/access.hpp"

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

bool is_plugin_route(server_context& ctx, const connector_path& at) {
  if (at.plugin_id.empty() || at.rest.empty()) return false;
  auto conn = ctx.connectors.find(at.plugin_id);
  auto manifest = conn ? conn->manifest() : nullptr;
  return manifest && manifest->has_route_path(at.rest);
}

void serve_plugin_route(server_context& ctx, const http_request& req, const connector_path& at,
                        std::function<void(http_response)> reply) {
  auto conn = ctx.connectors.find(at.plugin_id);
  auto manifest = conn ? conn->manifest() : nullptr;
  if (!manifest) return reply(error_response(req, http::status::not_found, "not_found", "no such resource"));
  const auto* route = manifest->find_route(std::string_view(req.method_string()), at.rest);
  // Before the method is revealed, the caller must be one who may know the route exists.
  if ((!route || !route->is_public) && !authorized(ctx, req)) return reply(unauthorized(req));
  if (!route)
    return reply(error_response(req, http::status::method_not_allowed, "method_not_allowed",
                                "this route takes another method"));
  std::string target(req.target());
  auto q = target.find('?');
  std::string query = q == std::string::npos ? std::string() : target.substr(q + 1);
  conn->http(std::string(req.method_string()), std::string(at.rest), std::move(query), req.body(), conn->make_strand(),
             plugin_route_timeout, [req_head = http_request(req.base()), reply = std::move(reply)](call_result r) {
               reply(to_response(req_head, r));
             });
}

}  // namespace xconn
