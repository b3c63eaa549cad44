// The tunnel an http_client opens through its proxy before speaking to the target (http_client.cpp's part).
#pragma once

#include <xconn/adapter/endpoint.hpp>
#include <xconn/adapter/proxy_url.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>

namespace xconn::adapter::detail {

// Over proxy (connected to via), asks for a tunnel to to's host and port: CONNECT or SOCKS5 as via says. Throws
// boost::system::system_error on any refusal; the proxy sees only a host and a port, never a path or a token.
boost::asio::awaitable<void> open_tunnel(boost::beast::tcp_stream& proxy, const proxy_url& via, const endpoint& to);

}  // namespace xconn::adapter::detail
