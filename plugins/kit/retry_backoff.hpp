// Forwards to the adapter layer's retry_backoff (xconn/adapter/retry_backoff.hpp) until its last includer moves there.
#pragma once

#include <xconn/adapter/retry_backoff.hpp>

namespace xconn::kit {
using xconn::adapter::retry_backoff;
}  // namespace xconn::kit
