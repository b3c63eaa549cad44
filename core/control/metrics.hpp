// GET /metrics (docs/protocol.md "Metrics"): the server's counters in the Prometheus text format, and the same counters
// as the `inbound` / `outbound` objects of {base}/health.
#pragma once

#include "core/messaging/inbound_service.hpp"
#include "core/messaging/outbound_service.hpp"
#include "core/context/server_context.hpp"

#include <boost/json/object.hpp>

#include <string>

namespace xconn {

boost::json::object inbound_health(const inbound_service::counters& c);
boost::json::object outbound_health(const outbound_service::counters& c);
std::string render_metrics(server_context& ctx);

}  // namespace xconn
