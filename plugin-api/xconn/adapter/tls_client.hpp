// TLS as the real targets use it: a client context that trusts the system store plus an optional PEM file and
// verifies the peer, and a connected TCP stream taken into TLS with SNI set and the host name (or IP) checked.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <memory>
#include <string>

namespace xconn::adapter {

using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// "" when ca_file ("" for none) was read, else a message naming the config key, never the file's content.
inline std::string trust_for_clients(boost::asio::ssl::context& tls, const std::string& ca_file) {
  boost::system::error_code ec;
  tls.set_default_verify_paths(ec);
  tls.set_verify_mode(boost::asio::ssl::verify_peer);
  if (ca_file.empty()) return "";
  tls.load_verify_file(ca_file, ec);
  return ec ? "config.ca_file: cannot be read as PEM certificates" : "";
}

// Moves plain (connected) into a TLS stream and completes the client handshake for host; throws on failure.
inline boost::asio::awaitable<std::unique_ptr<tls_stream>> start_tls(boost::beast::tcp_stream& plain,
                                                                   boost::asio::ssl::context& tls,
                                                                   const std::string& host) {
  auto stream = std::make_unique<tls_stream>(std::move(plain), tls);
  if (!SSL_set_tlsext_host_name(stream->native_handle(), host.c_str()))
    throw boost::system::system_error(boost::asio::error::invalid_argument);
  stream->set_verify_callback(boost::asio::ssl::host_name_verification(host));
  co_await stream->async_handshake(boost::asio::ssl::stream_base::client, boost::asio::use_awaitable);
  co_return stream;
}

}  // namespace xconn::adapter
