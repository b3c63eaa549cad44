// HTTP routes a plugin declares under its base path (docs/plugin-contract.md "Routes", plugin.h on_http): webhooks
// from targets and admin helpers such as echo's /inject. The host checks method and key; the plugin answers.
#pragma once

#include "core/wire/http_types.hpp"
#include "core/context/server_context.hpp"

#include <functional>

namespace xconn {

// A plugin's answer may take this long before the caller gets 504.
inline constexpr std::chrono::seconds plugin_route_timeout{30};

// Whether the path names a route the loaded plugin declares (under any method).
bool is_plugin_route(server_context& ctx, const connector_path& at);

// Whether the loaded plugin declares the request's method and path public (no API key: the plugin authenticates
// the caller itself). Known from the header alone, so it is decided before any of the body is read.
bool is_public_plugin_route(server_context& ctx, const http_request_header& req, const connector_path& at);

// Runs the declared route on the plugin pool, after the key (unless the route is public) and the method, and
// answers through reply once, from any thread.
void serve_plugin_route(server_context& ctx, const http_request& req, const connector_path& at,
                        std::function<void(http_response)> reply);

}  // namespace xconn
