// GET {base}/events?after=SEQ&limit=N[&wait=S] (docs/protocol.md "Events"): a page of the plugin's AIOS events, oldest
// first; with wait, held until an event past after exists or S seconds pass. The route table checks the key.
#pragma once

#include "core/context/server_context.hpp"
#include "core/wire/http_types.hpp"

#include <functional>

namespace xconn {

inline constexpr std::string_view events_path = "/events";

// answer runs once, at once or (long poll) from a recording thread or a timer.
void serve_events(server_context& ctx, const http_request& req, const connector_path& at,
                  std::function<void(http_response)> answer);

}  // namespace xconn
