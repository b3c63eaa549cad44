// Who may call the host's HTTP routes: a caller with a system API key (spec §3, docs/protocol.md "Keys").
#pragma once

#include "core/context/server_context.hpp"
#include "core/wire/http_types.hpp"

namespace xconn {

// Whether the request carries a valid API key (Authorization: Bearer <key>).
bool authorized(const server_context& ctx, const http_request_header& req);

// The answer to a caller without the key where one is required.
http_response unauthorized(const http_request_header& req);

}  // namespace xconn
