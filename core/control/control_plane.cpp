#include "core/control/control_plane.hpp"

#include "core/context/access.hpp"

#include "core/channels/channel_service.hpp"
#include "core/plugin_host/connector_card.hpp"
#include "core/channels/consumer_registry.hpp"
#include "core/messaging/inbound_service.hpp"
#include "core/control/metrics.hpp"
#include "core/messaging/outbound_service.hpp"

#include <boost/json.hpp>

namespace xconn {
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

http_response not_found(const http_request& req) {
  return error_response(req, http::status::not_found, "not_found", "no such resource");
}

bool is_public_document(std::string_view rest) {
  return rest == "/connector-card.json" || rest == "/skill.md" || rest == "/capability.json";
}

http_response text_response(const http_request& req, std::string_view content_type, std::string body) {
  http_response res{http::status::ok, req.version()};
  res.set(http::field::server, "xconn");
  res.set(http::field::content_type, content_type);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

// The latest reload of a plugin (docs/protocol.md "Hot reload"), or null before any.
json::value reload_json(const connector& c) {
  auto r = c.last_reload();
  if (!r) return nullptr;
  return json::object{{"status", r->ok ? "reloaded" : "refused"},
                      {"reason", r->reason},
                      {"at", r->at},
                      {"from_generation", r->from_generation},
                      {"to_generation", r->to_generation},
                      {"pause_ms", r->pause_ms},
                      {"longest_hold_ms", r->longest_hold_ms},
                      {"held_calls", r->held_calls},
                      {"failed_calls", r->failed_calls}};
}

}  // namespace

http_response connectors_page(server_context& ctx, const http_request& req, const connector_path&) {
  json::array list;
  for (const auto& c : ctx.connectors.all()) {
    auto manifest = c->manifest();
    const auto& m = *manifest;
    list.push_back({{"plugin_id", m.id},
                    {"connector_card_id", m.card_id},
                    {"name", m.card.at("connector").as_object().at("name")},
                    {"version", m.card_version},
                    {"health", to_string(c->health().health)},
                    {"generation", c->generation()},
                    {"config_digest", c->config_digest()},
                    {"reloading", c->paused()},
                    {"last_reload", reload_json(*c)}});
  }
  json::array refused;
  for (const auto& r : ctx.connectors.refused())
    refused.push_back({{"file", r.file}, {"plugin_id", r.plugin_id}, {"reason", r.reason}});
  return json_response(req, http::status::ok,
                       json::serialize(json::object{{"connectors", std::move(list)}, {"refused", std::move(refused)}}));
}

// Tools declared non_blocking that ran on their socket's I/O thread, and those moved to the pool for overrunning.
json::object tools_health(const connector& c) {
  auto t = c.inline_tools();
  json::array moved;
  for (auto& id : t.moved_to_pool) moved.emplace_back(id);
  return {{"inline_calls", t.calls}, {"inline_overruns", t.overruns}, {"moved_to_pool", std::move(moved)}};
}

http_response health_page(server_context& ctx, const http_request& req, const connector_path& at) {
  auto conn = ctx.connectors.find(at.plugin_id);
  if (!conn) return not_found(req);
  const connector& c = *conn;
  auto h = c.health();
  auto [open, authenticated] = ctx.channels.counts(c.id());
  auto manifest = c.manifest();
  const auto& m = *manifest;
  std::string_view status = h.health == health_state::healthy ? "ok"
                            : h.health == health_state::degraded ? "degraded"
                                                                 : "down";
  json::object body{{"status", status},
                    {"connector_card_id", m.card_id},
                    {"connector_card_version", m.card_version},
                    {"protocol_version", protocol_version},
                    {"build", m.build},
                    {"adapter",
                     {{"health", to_string(h.health)},
                      {"last_error_code", h.last_error_code},
                      {"last_seen_at", h.last_seen_at},
                      {"generation", c.generation()},
                      {"last_reload", reload_json(c)}}},
                    {"channels", {{"open", open}, {"authenticated", authenticated}}},
                    {"inbound", inbound_health(ctx.inbound.stats(c.id()))},
                    {"outbound", outbound_health(ctx.outbound.stats(c.id()))},
                    {"consumers", {{"live", ctx.consumers.live(c.id())}}},
                    {"tools", tools_health(c)}};
  auto code = h.health == health_state::down ? http::status::service_unavailable : http::status::ok;
  return json_response(req, code, json::serialize(body));
}

http_response livez_page(server_context&, const http_request& req, const connector_path&) {
  return json_response(req, http::status::ok, R"({"status":"ok"})");
}

http_response readyz_page(server_context& ctx, const http_request& req, const connector_path&) {
  json::object plugins;
  bool ready = !ctx.stopping;
  for (const auto& conn : ctx.connectors.all()) {
    auto h = conn->health().health;
    plugins[conn->id()] = to_string(h);
    ready = ready && h != health_state::down;
  }
  for (const auto& id : ctx.cfg.plugins.allow)
    if (!plugins.contains(id)) {
      plugins[id] = "missing";
      ready = false;
    }
  ready = ready && !plugins.empty();
  std::string_view status = ctx.stopping ? "stopping" : ready ? "ready" : "not_ready";
  return json_response(req, ready ? http::status::ok : http::status::service_unavailable,
                       json::serialize(json::object{{"status", status}, {"plugins", std::move(plugins)}}));
}

http_response metrics_page(server_context& ctx, const http_request& req, const connector_path&) {
  return text_response(req, "text/plain; version=0.0.4; charset=utf-8", render_metrics(ctx));
}

http_response card_page(server_context& ctx, const http_request& req, const connector_path& at) {
  auto conn = ctx.connectors.find(at.plugin_id);
  if (!conn) return not_found(req);
  return json_response(req, http::status::ok, json::serialize(conn->manifest()->card));
}

http_response skill_page(server_context& ctx, const http_request& req, const connector_path& at) {
  auto conn = ctx.connectors.find(at.plugin_id);
  auto manifest = conn ? conn->manifest() : nullptr;
  if (!manifest || manifest->skill.empty()) return not_found(req);
  return text_response(req, "text/markdown; charset=utf-8", manifest->skill);
}

http_response capability_page(server_context& ctx, const http_request& req, const connector_path& at) {
  auto conn = ctx.connectors.find(at.plugin_id);
  if (!conn) return not_found(req);
  json::object cap = conn->manifest()->capability;
  cap["health"] = to_string(conn->health().health);
  return json_response(req, http::status::ok, json::serialize(cap));
}

http_response no_such_route(server_context& ctx, const http_request& req, const connector_path& at) {
  bool known = !at.plugin_id.empty() && ctx.connectors.find(at.plugin_id);
  if (!is_public_document(at.rest) && !authorized(ctx, req)) return unauthorized(req);
  if (known && req.method() != http::verb::get)
    return error_response(req, http::status::method_not_allowed, "method_not_allowed", "use GET");
  return not_found(req);
}

}  // namespace xconn
