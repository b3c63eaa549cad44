// The control plane (spec §4, protocol.md §1 and §6): card, skill, capability and health under each
// plugin's base path, and xconn's own GET /connectors. Answers one request; never blocks.
#pragma once

#include "core/wire/http_types.hpp"
#include "core/context/server_context.hpp"

namespace xconn {

http_response handle_control_request(server_context& ctx, const http_request& req);

// Whether the request carries a valid API key.
bool authorized(const server_context& ctx, const http_request_header& req);

}  // namespace xconn
