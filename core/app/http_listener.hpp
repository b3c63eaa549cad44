// Accepts TCP connections on the configured address, each on its own strand, and hands each to serve. An accept
// that fails (out of file descriptors, out of memory) is tried again after a back-off, 10 ms doubling to 1 s, and
// reported once per 10 s with how many failed meanwhile: never a busy loop, never a log line per try.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>

#include <chrono>
#include <cstdint>
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
  void back_off(const boost::beast::error_code& ec);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  serve_fn serve_;
  // On the acceptor's strand only:
  boost::asio::steady_timer retry_;
  std::chrono::milliseconds backoff_{0};
  std::uint64_t failed_since_report_ = 0;
  std::chrono::steady_clock::time_point last_report_{};
};

}  // namespace xconn
