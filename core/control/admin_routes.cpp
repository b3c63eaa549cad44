#include "core/control/admin_routes.hpp"

#include "core/channels/channel_service.hpp"
#include "core/context/access.hpp"
#include "core/control/config_reload.hpp"

#include <boost/json.hpp>

namespace xconn {
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

json::array strings(const std::vector<std::string>& values) {
  json::array out;
  for (const auto& v : values) out.emplace_back(v);
  return out;
}

http_response config_invalid(const http_request_header& req, const reload_report& r) {
  return error_response(req, http::status::unprocessable_entity, "config_invalid", r.error);
}

// 422 with the file's error, or what happens now.
http_response reload_answer(server_context& ctx, const http_request_header& req, const reload_report& r) {
  if (!r.error.empty()) return config_invalid(req, r);
  return json_response(req, http::status::ok,
                       json::serialize(json::object{{"config", ctx.cfg.source_path},
                                                    {"status", "applied"},
                                                    {"reloading", strings(r.reloading)},
                                                    {"unchanged", strings(r.unchanged)},
                                                    {"restart_required", strings(r.restart_required)}}));
}

}  // namespace

// The session answers 503 before either route runs once the server is stopping.
void serve_config_reload(server_context& ctx, const http_request& req, std::function<void(http_response)> answer) {
  ctx.reloader->reload("", [&ctx, head = http_request_header(req), answer = std::move(answer)](reload_report r) {
    answer(reload_answer(ctx, head, r));
  });
}

void serve_plugin_reload(server_context& ctx, const http_request& req, const connector_path& at,
                         std::function<void(http_response)> answer) {
  std::string plugin_id(at.plugin_id);
  if (!ctx.connectors.knows(plugin_id)) return answer(error_response(req, http::status::not_found, "not_found", "no such resource"));
  auto conn = ctx.connectors.find(plugin_id);
  json::value generation = conn ? json::value(conn->generation()) : nullptr;
  ctx.reloader->reload(plugin_id, [req = http_request_header(req), plugin_id, generation,
                                   answer = std::move(answer)](reload_report r) {
    if (!r.error.empty()) return answer(config_invalid(req, r));
    answer(json_response(req, http::status::accepted,
                         json::serialize(json::object{{"plugin_id", plugin_id},
                                                      {"status", "reloading"},
                                                      {"generation", generation},
                                                      {"restart_required", strings(r.restart_required)}})));
  });
}

http_response channels_page(server_context& ctx, const http_request& req, const connector_path& at) {
  json::array list;
  for (const auto& [c, status] : ctx.channels.of_plugin(at.plugin_id)) {
    json::object entry{{"connector_channel_id", c.id},
                       {"connector_id", c.owner},
                       {"authenticated", c.authenticated},
                       {"persistent", c.persistent},
                       {"routed", !c.route.expired()},
                       {"status", status},
                       {"created_at", c.created_at}};
    // The plugin's short code for the status it reported (target_unreachable, ...), while that status shows.
    if (!c.target_reason.empty() && status == c.target_status) entry["status_reason"] = c.target_reason;
    list.push_back(std::move(entry));
  }
  return json_response(req, http::status::ok, json::serialize(json::object{{"channels", std::move(list)}}));
}

}  // namespace xconn
