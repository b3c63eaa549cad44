// Accepts TCP connections on the configured address; each gets its own strand and http_session.
#pragma once

#include "core/context/server_context.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>

#include <memory>

namespace xconn {

class http_listener : public std::enable_shared_from_this<http_listener> {
 public:
  http_listener(boost::asio::io_context& io, server_context& ctx);
  // Binds and listens; the error names the address.
  std::string open(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void run();
  void close();  // stops accepting; safe from any thread

 private:
  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  server_context& ctx_;
};

}  // namespace xconn
