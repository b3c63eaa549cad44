// Where the Bot API is: "https://api.telegram.org" or, for tests, "http://127.0.0.1:PORT" (config.api_base_url); the
// adapter layer's endpoint.
#pragma once

#include <xconn/adapter/endpoint.hpp>

namespace telegram {
using api_endpoint = xconn::adapter::endpoint;
}  // namespace telegram
