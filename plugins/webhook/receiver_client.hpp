// POSTs to a channel's receiver (its outbound_url) over the adapter layer's HTTP client
// (<xconn/adapter/http_client.hpp>): connections kept per receiver and reused, TLS verified against the system store
// (plus config.ca_file) with the host name checked. No error text here ever holds a URL, a header or a body: the URL
// may carry a receiver's token, and the signature is a secret's work.
#pragma once

#include "webhook_url.hpp"

#include <xconn/adapter/http_client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <string>

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
  void close_idle() { client_.close_idle(); }

  using header_list = xconn::adapter::header_list;
  boost::asio::awaitable<post_result> post(const receiver_url& url, const std::string& body, const header_list& headers,
                                           std::chrono::milliseconds timeout);
  // A HEAD of the URL: whether the receiver answers at all (the outage probe; nothing is delivered).
  boost::asio::awaitable<post_result> head(const receiver_url& url, const header_list& headers,
                                           std::chrono::milliseconds timeout);

 private:
  boost::asio::awaitable<post_result> send(const receiver_url& url, xconn::adapter::http_request req,
                                           std::chrono::milliseconds timeout);

  xconn::adapter::http_client client_;  // one event-loop thread only
};

}  // namespace webhook
