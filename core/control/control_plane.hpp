// The control plane (spec §4, docs/protocol.md "Health"): card, skill, capability and health under each plugin's
// base path, and xconn's own GET /connectors and POST {base}/reload. Each page answers one request at once; the
// route table (app/http_routes.cpp) checks the key and the method before calling it.
#pragma once

#include "core/context/server_context.hpp"
#include "core/wire/http_types.hpp"

namespace xconn {

http_response connectors_page(server_context& ctx, const http_request& req, const connector_path& at);
http_response card_page(server_context& ctx, const http_request& req, const connector_path& at);
http_response skill_page(server_context& ctx, const http_request& req, const connector_path& at);
http_response capability_page(server_context& ctx, const http_request& req, const connector_path& at);
http_response health_page(server_context& ctx, const http_request& req, const connector_path& at);
http_response metrics_page(server_context& ctx, const http_request& req, const connector_path& at);
// Probes for an orchestrator, public and saying nothing secret: /livez answers while the process serves HTTP;
// /readyz is 200 once every plugin plugins.allow names (or, with no allow-list, every loaded one, at least one)
// is loaded and not down, 503 otherwise and while stopping.
http_response livez_page(server_context& ctx, const http_request& req, const connector_path& at);
http_response readyz_page(server_context& ctx, const http_request& req, const connector_path& at);

// Whatever no route serves: 404 to a caller who may know what exists (one with the key, or one asking for a
// public document), 401 to anyone else; 405 for another method on a loaded plugin's base path.
http_response no_such_route(server_context& ctx, const http_request& req, const connector_path& at);

}  // namespace xconn
