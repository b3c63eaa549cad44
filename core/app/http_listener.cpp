#include "core/app/http_listener.hpp"

#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace xconn {
namespace beast = boost::beast;

http_listener::http_listener(boost::asio::io_context& io, std::size_t max_connections, serve_fn serve)
    : io_(io), acceptor_(boost::asio::make_strand(io)), slots_(max_connections), serve_(std::move(serve)),
      retry_(acceptor_.get_executor()) {}

bool http_listener::throttled_report::due() {
  using namespace std::chrono_literals;
  ++since_last;
  auto now = std::chrono::steady_clock::now();
  if (last != std::chrono::steady_clock::time_point{} && now - last < 10s) return false;
  last = now;
  return true;
}

std::string http_listener::open(const boost::asio::ip::tcp::endpoint& endpoint) {
  beast::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) return "cannot listen on " + endpoint.address().to_string() + ":" + std::to_string(endpoint.port()) +
                 ": " + ec.message();
  return {};
}

void http_listener::run() { do_accept(); }

void http_listener::close() {
  boost::asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
    self->retry_.cancel();
  });
}

void http_listener::do_accept() {
  acceptor_.async_accept(boost::asio::make_strand(io_),
                         beast::bind_front_handler(&http_listener::on_accept, shared_from_this()));
}

void http_listener::on_accept(beast::error_code ec, boost::asio::ip::tcp::socket socket) {
  if (ec == boost::asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) return back_off(ec);
  backoff_ = std::chrono::milliseconds(0);
  if (auto slot = slots_.try_take()) {
    beast::error_code nd;
    socket.set_option(boost::asio::ip::tcp::no_delay(true), nd);
    serve_(std::move(socket), std::move(*slot));
  } else {
    refuse(socket);
  }
  do_accept();
}

void http_listener::refuse(boost::asio::ip::tcp::socket& socket) {
  beast::error_code ignored;
  socket.close(ignored);
  if (refusals_.due()) {
    spdlog::warn("accept: {} connections are open (server.max_connections); {} new ones closed since the last report",
                 slots_.capacity(), refusals_.since_last);
    refusals_.since_last = 0;
  }
}

void http_listener::back_off(const beast::error_code& ec) {
  using namespace std::chrono_literals;
  if (failures_.due()) {
    spdlog::warn("accept: {} ({} failed since the last report); new connections wait, retried up to once a second",
                 ec.message(), failures_.since_last);
    failures_.since_last = 0;
  }
  backoff_ = backoff_ == 0ms ? 10ms : std::min<std::chrono::milliseconds>(backoff_ * 2, 1000ms);
  retry_.expires_after(backoff_);
  retry_.async_wait([self = shared_from_this()](beast::error_code cancelled) {
    if (!cancelled && self->acceptor_.is_open()) self->do_accept();
  });
}

}  // namespace xconn
