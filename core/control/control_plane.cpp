#include "core/control/control_plane.hpp"

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

http_response unauthorized(const http_request& req) {
  return error_response(req, http::status::unauthorized, "unauthorized",
                        "a valid API key is required (Authorization: Bearer <key>)");
}

http_response not_found(const http_request& req) {
  return error_response(req, http::status::not_found, "not_found", "no such resource");
}

// The latest reload of a plugin (protocol.md §7), or null before any.
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

http_response connectors_list(server_context& ctx, const http_request& req) {
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

http_response health(server_context& ctx, const connector& c, const http_request& req) {
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
                    {"consumers", {{"live", ctx.consumers.live(c.id())}}}};
  auto code = h.health == health_state::down ? http::status::service_unavailable : http::status::ok;
  return json_response(req, code, json::serialize(body));
}

// POST /connectors/{plugin_id}/reload: queued on the reload thread; the outcome shows in /connectors and /health.
http_response reload(server_context& ctx, const http_request& req, const std::string& plugin_id) {
  if (!authorized(ctx, req)) return unauthorized(req);
  if (req.method() != http::verb::post)
    return error_response(req, http::status::method_not_allowed, "method_not_allowed", "use POST");
  if (ctx.stopping) return error_response(req, http::status::service_unavailable, "shutting_down", "the server is stopping");
  if (!ctx.connectors.request_reload(plugin_id)) return not_found(req);
  auto conn = ctx.connectors.find(plugin_id);
  return json_response(req, http::status::accepted,
                       json::serialize(json::object{{"plugin_id", plugin_id},
                                                    {"status", "reloading"},
                                                    {"generation", conn ? json::value(conn->generation()) : nullptr}}));
}

}  // namespace

bool authorized(const server_context& ctx, const http_request_header& req) {
  auto it = req.find(http::field::authorization);
  return it != req.end() && ctx.keys.authorizes(it->value());
}

http_response handle_control_request(server_context& ctx, const http_request& req) {
  std::string_view target = req.target();
  std::string_view path = target.substr(0, target.find('?'));
  if (path == "/metrics") {
    if (!authorized(ctx, req)) return unauthorized(req);
    if (req.method() != http::verb::get)
      return error_response(req, http::status::method_not_allowed, "method_not_allowed", "use GET");
    http_response res{http::status::ok, req.version()};
    res.set(http::field::server, "xconn");
    res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.keep_alive(req.keep_alive());
    res.body() = render_metrics(ctx);
    res.prepare_payload();
    return res;
  }
  if (path == "/connectors" || path == "/connectors/") {
    if (!authorized(ctx, req)) return unauthorized(req);
    if (req.method() != http::verb::get) return error_response(req, http::status::method_not_allowed,
                                                               "method_not_allowed", "use GET");
    return connectors_list(ctx, req);
  }
  auto parts = split_connector_path(target);
  if (parts.rest == "/reload" && !parts.plugin_id.empty()) return reload(ctx, req, std::string(parts.plugin_id));
  auto conn = parts.plugin_id.empty() ? nullptr : ctx.connectors.find(parts.plugin_id);
  bool is_public = parts.rest == "/connector-card.json" || parts.rest == "/skill.md" || parts.rest == "/capability.json";
  if (!conn) {
    // Past the public documents, only a caller with the key learns what exists.
    return is_public || authorized(ctx, req) ? not_found(req) : unauthorized(req);
  }
  auto manifest = conn->manifest();
  const auto& m = *manifest;
  if (!is_public && !authorized(ctx, req)) return unauthorized(req);
  if (req.method() != http::verb::get)
    return error_response(req, http::status::method_not_allowed, "method_not_allowed", "use GET");

  if (parts.rest == "/connector-card.json") return json_response(req, http::status::ok, json::serialize(m.card));
  if (parts.rest == "/skill.md") {
    if (m.skill.empty()) return not_found(req);
    http_response res{http::status::ok, req.version()};
    res.set(http::field::server, "xconn");
    res.set(http::field::content_type, "text/markdown; charset=utf-8");
    res.keep_alive(req.keep_alive());
    res.body() = m.skill;
    res.prepare_payload();
    return res;
  }
  if (parts.rest == "/capability.json") {
    json::object cap = m.capability;
    cap["health"] = to_string(conn->health().health);
    return json_response(req, http::status::ok, json::serialize(cap));
  }
  if (parts.rest == "/health") return health(ctx, *conn, req);
  return not_found(req);
}

}  // namespace xconn
