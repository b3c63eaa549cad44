#include "core/app/http_routes.hpp"

#include "core/context/access.hpp"
#include "core/control/admin_routes.hpp"
#include "core/control/control_plane.hpp"
#include "core/control/event_routes.hpp"
#include "core/control/plugin_routes.hpp"

#include <boost/beast/websocket/rfc6455.hpp>

#include <array>

namespace xconn {
namespace http = boost::beast::http;

namespace {

using page_fn = http_response (*)(server_context&, const http_request&, const connector_path&);

bool loaded(server_context& ctx, const connector_path& at) {
  return !at.plugin_id.empty() && ctx.connectors.find(at.plugin_id) != nullptr;
}

std::string_view path_of(const http_request_header& req) {
  std::string_view target = req.target();
  return target.substr(0, target.find('?'));
}

// A page that answers at once.
template <page_fn page>
void answer_now(server_context& ctx, const http_request& req, const connector_path& at, answer_fn answer) {
  answer(page(ctx, req, at));
}

// A document of a loaded plugin: {base}<rest>.
template <const std::string_view& rest>
bool plugin_document(server_context& ctx, const http_request_header&, const connector_path& at) {
  return at.rest == rest && loaded(ctx, at);
}

constexpr std::string_view card_path = "/connector-card.json";
constexpr std::string_view skill_path = "/skill.md";
constexpr std::string_view capability_path = "/capability.json";
constexpr std::string_view health_path = "/health";

constexpr auto get = http::verb::get;
constexpr auto post = http::verb::post;
constexpr auto any = http::verb::unknown;
using enum route_body;
using enum route_access;

const std::array routes{
    route_entry{"GET {base}/ws (WebSocket upgrade)", upgrade, key, any,
               [](server_context&, const http_request_header& req, const connector_path&) {
                 return boost::beast::websocket::is_upgrade(req);
               },
               nullptr},
    route_entry{"POST {base}/files/uploads", streamed, key, any,
               [](server_context& ctx, const http_request_header&, const connector_path& at) {
                 return is_upload_path(at) && loaded(ctx, at);
               },
               nullptr},
    route_entry{"GET|HEAD|DELETE {base}/files/refs/{file_ref}", whole, signed_url, any,
               [](server_context& ctx, const http_request_header&, const connector_path& at) {
                 return is_file_ref_path(at) && loaded(ctx, at);
               },
               [](server_context& ctx, const http_request& req, const connector_path&, answer_fn answer) {
                 serve_file_ref(ctx, req, std::move(answer));
               }},
    route_entry{"{base}/{a route the plugin declares}", whole, plugin_declared, any,
               [](server_context& ctx, const http_request_header&, const connector_path& at) {
                 return is_plugin_route(ctx, at);
               },
               [](server_context& ctx, const http_request& req, const connector_path& at, answer_fn answer) {
                 serve_plugin_route(ctx, req, at, [answer = std::move(answer)](http_response res) {
                   answer(std::move(res));
                 });
               }},
    route_entry{"GET /metrics", whole, key, get,
               [](server_context&, const http_request_header& req, const connector_path&) {
                 return path_of(req) == "/metrics";
               },
               answer_now<metrics_page>},
    route_entry{"GET /livez", whole, anyone, get,
               [](server_context&, const http_request_header& req, const connector_path&) {
                 return path_of(req) == "/livez";
               },
               answer_now<livez_page>},
    route_entry{"GET /readyz", whole, anyone, get,
               [](server_context&, const http_request_header& req, const connector_path&) {
                 return path_of(req) == "/readyz";
               },
               answer_now<readyz_page>},
    route_entry{"GET /connectors", whole, key, get,
               [](server_context&, const http_request_header& req, const connector_path&) {
                 return path_of(req) == "/connectors" || path_of(req) == "/connectors/";
               },
               answer_now<connectors_page>},
    route_entry{"POST {base}/reload", whole, key, post,
               [](server_context&, const http_request_header&, const connector_path& at) {
                 return at.rest == "/reload" && !at.plugin_id.empty();
               },
               [](server_context& ctx, const http_request& req, const connector_path& at, answer_fn answer) {
                 serve_plugin_reload(ctx, req, at, [answer = std::move(answer)](http_response res) { answer(std::move(res)); });
               }},
    route_entry{"POST /admin/reload", whole, key, post,
               [](server_context&, const http_request_header& req, const connector_path&) {
                 return path_of(req) == "/admin/reload";
               },
               [](server_context& ctx, const http_request& req, const connector_path&, answer_fn answer) {
                 serve_config_reload(ctx, req, [answer = std::move(answer)](http_response res) { answer(std::move(res)); });
               }},
    route_entry{"GET /admin/backup", backup, key, get,
               [](server_context&, const http_request_header& req, const connector_path&) {
                 return path_of(req) == "/admin/backup";
               },
               nullptr},
    route_entry{"GET {base}/channels", whole, key, get,
               [](server_context& ctx, const http_request_header&, const connector_path& at) {
                 return at.rest == "/channels" && loaded(ctx, at);
               },
               answer_now<channels_page>},
    route_entry{"GET {base}/events", whole, key, get,
               [](server_context& ctx, const http_request_header&, const connector_path& at) {
                 return at.rest == events_path && loaded(ctx, at);
               },
               [](server_context& ctx, const http_request& req, const connector_path& at, answer_fn answer) {
                 serve_events(ctx, req, at, [answer = std::move(answer)](http_response res) { answer(std::move(res)); });
               }},
    route_entry{"GET {base}/connector-card.json", whole, anyone, get, plugin_document<card_path>,
               answer_now<card_page>},
    route_entry{"GET {base}/skill.md", whole, anyone, get, plugin_document<skill_path>, answer_now<skill_page>},
    route_entry{"GET {base}/capability.json", whole, anyone, get, plugin_document<capability_path>,
               answer_now<capability_page>},
    route_entry{"GET {base}/health", whole, key, get, plugin_document<health_path>, answer_now<health_page>},
    route_entry{"anything else", whole, public_documents, any,
               [](server_context&, const http_request_header&, const connector_path&) { return true; },
               answer_now<no_such_route>},
};

}  // namespace

const route_entry& route_for(server_context& ctx, const http_request_header& req) {
  auto at = split_connector_path(req.target());
  for (const auto& route : routes)
    if (route.match(ctx, req, at)) return route;
  return routes.back();
}

bool open_without_key(const route_entry& route, server_context& ctx, const http_request_header& req) {
  auto at = split_connector_path(req.target());
  switch (route.access) {
    case key: return false;
    case anyone: return true;
    case signed_url: return req.method() == http::verb::get || req.method() == http::verb::head;
    case plugin_declared: return is_public_plugin_route(ctx, req, at);
    case public_documents: return at.rest == card_path || at.rest == skill_path || at.rest == capability_path;
  }
  return false;
}

void serve_route(const route_entry& route, server_context& ctx, const http_request& req, answer_fn answer) {
  if (route.access == key && !authorized(ctx, req)) return answer(unauthorized(req));
  if (route.method != any && req.method() != route.method)
    return answer(error_response(req, http::status::method_not_allowed, "method_not_allowed",
                                 "use " + std::string(http::to_string(route.method))));
  route.serve(ctx, req, split_connector_path(req.target()), std::move(answer));
}

}  // namespace xconn
