// Moved to the adapter layer (<xconn/adapter/tls_client.hpp>); this name stays until its last user switches.
#pragma once

#include <xconn/adapter/tls_client.hpp>

namespace xconn::kit {
using xconn::adapter::start_tls;
using xconn::adapter::tls_stream;
using xconn::adapter::trust_for_clients;
}  // namespace xconn::kit
