#include "core/control/plugin_routes.hpp"

#include "core/context/access.hpp"

#include <boost/json.hpp>

#include <cctype>
#include <regex>

namespace xconn {
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// The request's headers for the plugin: lowercase names, repeats joined; the API key stays the host's.
std::string headers_for_plugin(const http_request& req, bool is_public) {
  json::object headers;
  for (const auto& field : req.base()) {
    std::string name(field.name_string());
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name == "authorization" && !is_public) continue;
    auto* seen = headers.if_contains(name);
    if (seen) {
      seen->as_string().append(", ").append(field.value());
    } else {
      headers[name] = field.value();
    }
  }
  return json::serialize(headers);
}

// Whether the plugin may set this response header: a token name, a value without control bytes, none of the host's.
bool settable_header(std::string_view name, const json::value& value) {
  static const std::regex token("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$");
  if (!value.is_string() || value.as_string().size() > 1024 || !std::regex_match(name.begin(), name.end(), token))
    return false;
  for (unsigned char ch : value.as_string())
    if (ch < 0x20 && ch != '\t') return false;
  for (std::string_view host_owned : {"content-type", "content-length", "transfer-encoding", "connection", "server",
                                      "date", "keep-alive", "upgrade", "trailer", "te"})
    if (boost::beast::iequals(name, host_owned)) return false;
  return true;
}

// The plugin's {"status","content_type","body","headers"} as a response, or 502 when it is not that.
http_response to_response(const http_request& req, const call_result& r) {
  if (r.timed_out) return error_response(req, http::status::gateway_timeout, "plugin_timeout", "the connector did not answer in time");
  if (!r.ok) return error_response(req, http::status::bad_gateway, "plugin_failed", "the connector failed to answer");
  boost::system::error_code ec;
  auto v = json::parse(r.json, ec);
  const json::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
  auto* status = o ? o->if_contains("status") : nullptr;
  auto* body = o ? o->if_contains("body") : nullptr;
  auto* type = o ? o->if_contains("content_type") : nullptr;
  auto* headers = o ? o->if_contains("headers") : nullptr;
  bool headers_ok = !headers || (headers->is_object() && headers->as_object().size() <= 16);
  if (headers_ok && headers)
    for (const auto& h : headers->as_object()) headers_ok = headers_ok && settable_header(h.key(), h.value());
  if (!status || !status->is_int64() || status->as_int64() < 100 || status->as_int64() > 599 ||
      (body && !body->is_string()) || (type && !type->is_string()) || !headers_ok)
    return error_response(req, http::status::bad_gateway, "invalid_plugin_result", "the connector's answer was malformed");
  http_response res{static_cast<http::status>(status->as_int64()), req.version()};
  res.set(http::field::server, "xconn");
  res.set(http::field::content_type, type ? std::string_view(type->as_string()) : std::string_view("application/json"));
  res.keep_alive(req.keep_alive());
  if (headers)
    for (const auto& h : headers->as_object()) res.set(std::string_view(h.key()), std::string_view(h.value().as_string()));
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

bool is_public_plugin_route(server_context& ctx, const http_request_header& req, const connector_path& at) {
  auto conn = at.plugin_id.empty() ? nullptr : ctx.connectors.find(at.plugin_id);
  auto manifest = conn ? conn->manifest() : nullptr;
  const auto* route = manifest ? manifest->find_route(std::string_view(req.method_string()), at.rest) : nullptr;
  return route && route->is_public;
}

void serve_plugin_route(server_context& ctx, const http_request& req, const connector_path& at,
                        std::function<void(http_response)> reply) {
  auto conn = ctx.connectors.find(at.plugin_id);
  auto manifest = conn ? conn->manifest() : nullptr;
  if (!manifest) return reply(error_response(req, http::status::not_found, "not_found", "no such resource"));
  std::string path_param;
  const auto* route = manifest->find_route(std::string_view(req.method_string()), at.rest, &path_param);
  // Before the method is revealed, the caller must be one who may know the route exists.
  if ((!route || !route->is_public) && !authorized(ctx, req)) return reply(unauthorized(req));
  if (!route)
    return reply(error_response(req, http::status::method_not_allowed, "method_not_allowed",
                                "this route takes another method"));
  std::string target(req.target());
  auto q = target.find('?');
  std::string query = q == std::string::npos ? std::string() : target.substr(q + 1);
  connector::http_call call{std::string(req.method_string()), std::string(at.rest), std::move(path_param),
                            std::move(query), headers_for_plugin(req, route->is_public), req.body()};
  conn->http(std::move(call), conn->make_strand(), plugin_route_timeout,
             [req_head = http_request(req.base()), reply = std::move(reply)](call_result r) {
               reply(to_response(req_head, r));
             });
}

}  // namespace xconn
