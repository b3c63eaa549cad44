// config.proxy: "http://[user:password@]host:port" (a CONNECT tunnel) or "socks5://[user:password@]host:port"; the
// adapter layer's proxy_url.
#pragma once

#include <xconn/adapter/proxy_url.hpp>

namespace telegram {
using proxy_url = xconn::adapter::proxy_url;
}  // namespace telegram
