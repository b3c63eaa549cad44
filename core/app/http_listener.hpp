// Accepts TCP connections on the configured address, each on its own strand, and hands each to serve with one of
// server.max_connections slots; a connection accepted when none is free is closed at once. An accept that fails
// (out of file descriptors, out of memory) is tried again after a back-off, 10 ms doubling to 1 s. Both are
// reported once per 10 s with how many happened meanwhile: never a busy loop, never a log line per try.
#pragma once

#include "core/context/connection_slots.hpp"

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
  using serve_fn = std::function<void(boost::asio::ip::tcp::socket&& socket, connection_slots::slot slot)>;
  http_listener(boost::asio::io_context& io, std::size_t max_connections, serve_fn serve);
  // Binds and listens; the error names the address.
  std::string open(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void run();
  void close();  // stops accepting; safe from any thread
  std::size_t open_connections() const { return slots_.open(); }

 private:
  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);
  void back_off(const boost::beast::error_code& ec);
  void refuse(boost::asio::ip::tcp::socket& socket);

  // Counts events and says whether one is due a log line (the first, then at most one per 10 s).
  struct throttled_report {
    std::uint64_t since_last = 0;
    std::chrono::steady_clock::time_point last{};
    bool due();
  };

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  connection_slots slots_;
  serve_fn serve_;
  // On the acceptor's strand only:
  boost::asio::steady_timer retry_;
  std::chrono::milliseconds backoff_{0};
  throttled_report failures_, refusals_;
};

}  // namespace xconn
