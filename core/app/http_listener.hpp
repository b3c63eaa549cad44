// Accepts TCP connections on the configured address, each on its own strand, and hands each to serve.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>

#include <functional>
#include <memory>

namespace xconn {

class http_listener : public std::enable_shared_from_this<http_listener> {
 public:
  using serve_fn = std::function<void(boost::asio::ip::tcp::socket&& socket)>;
  http_listener(boost::asio::io_context& io, serve_fn serve);
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
  serve_fn serve_;
};

}  // namespace xconn
