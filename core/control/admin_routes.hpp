// xconn's own operator routes beside the protocol's (docs/operations.md): reading the YAML again, a plugin's
// reload, and a plugin's channels. The route table checks the key.
#pragma once

#include "core/context/server_context.hpp"
#include "core/wire/http_types.hpp"

#include <functional>

namespace xconn {

// POST /admin/reload: what SIGHUP does; answered once the changes are known (from the reload thread).
void serve_config_reload(server_context& ctx, const http_request& req, std::function<void(http_response)> answer);
// POST {base}/reload: the YAML read again, then this plugin reloaded (with its new section when it changed).
void serve_plugin_reload(server_context& ctx, const http_request& req, const connector_path& at,
                         std::function<void(http_response)> answer);
// GET {base}/channels: the plugin's channels, never a credential.
http_response channels_page(server_context& ctx, const http_request& req, const connector_path& at);

}  // namespace xconn
