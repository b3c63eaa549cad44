// POSTs to a channel's receiver (its outbound_url) over HTTP or HTTPS, as the plugin's own event loop speaks it:
// each POST an Asio coroutine with a deadline, connections kept per receiver and reused. TLS is verified against
// the system store (plus config.ca_file) with the host name checked. No error text here ever holds a URL, a
// header or a body: the URL may carry a receiver's token, and the signature is a secret's work.
#pragma once

#include "webhook_url.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace webhook {

// One POST's outcome. transport_error set: no HTTP answer came ("timeout", "resolve_failed", "connect_failed",
// "tls_failed", "exchange_failed"); else the receiver's status.
struct post_result {
  std::string transport_error;
  int http_status = 0;
  int retry_after_s = -1;  // a Retry-After of whole seconds, when the receiver sent one

  bool reached() const { return transport_error.empty(); }
};

class receiver_client {
 public:
  // ca_file: extra PEM certificates to trust ("" for none); the error, if it cannot be read, in *error.
  receiver_client(boost::asio::io_context& io, const std::string& ca_file, std::string* error);

  // Closes the kept connections: before the io_context they belong to goes (the plugin's halt).
  void close_idle() { idle_.clear(); }

  using header_list = std::vector<std::pair<std::string, std::string>>;
  boost::asio::awaitable<post_result> post(const receiver_url& url, const std::string& body, const header_list& headers,
                                           std::chrono::milliseconds timeout);
  // A HEAD of the URL: whether the receiver answers at all (the outage probe; nothing is delivered).
  boost::asio::awaitable<post_result> head(const receiver_url& url, const header_list& headers,
                                           std::chrono::milliseconds timeout);

 private:
  using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
  struct connection {
    std::unique_ptr<boost::beast::tcp_stream> plain;
    std::unique_ptr<tls_stream> tls;
  };
  static constexpr std::size_t max_idle_per_receiver = 8;
  static constexpr std::size_t max_receivers_kept = 256;

  boost::asio::awaitable<post_result> send(boost::beast::http::request<boost::beast::http::string_body> req,
                                           const receiver_url& url, const header_list& headers,
                                           std::chrono::milliseconds timeout);
  boost::asio::awaitable<connection> open(const receiver_url& url, std::chrono::milliseconds timeout, std::string& step);

  boost::asio::io_context& io_;
  boost::asio::ssl::context tls_{boost::asio::ssl::context::tls_client};
  std::map<std::string, std::vector<connection>> idle_;  // by scheme, host and port (the event-loop thread only)
};

}  // namespace webhook
