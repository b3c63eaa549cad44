#include "load_socket.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket.hpp>

namespace xconn::load {
namespace beast = boost::beast;
namespace websocket = beast::websocket;

struct load_socket::connection {
  explicit connection(boost::asio::io_context& io) : ws(io) {}
  websocket::stream<beast::tcp_stream, false> ws;  // false: no permessage-deflate code (never offered)
  beast::flat_buffer buffer;
};

load_socket::load_socket(boost::asio::io_context& io) : io_(std::make_unique<connection>(io)) {}
load_socket::~load_socket() = default;

void load_socket::start(const upgrade_request& request, std::function<void(beast::error_code)> upgraded) {
  auto& tcp = beast::get_lowest_layer(io_->ws);
  tcp.expires_after(std::chrono::seconds(10));
  tcp.async_connect(request.endpoint, [self = shared_from_this(), request,
                                       upgraded = std::move(upgraded)](beast::error_code ec) mutable {
    if (ec) return upgraded(ec);
    auto& tcp = beast::get_lowest_layer(self->io_->ws);
    tcp.expires_never();
    tcp.socket().set_option(boost::asio::ip::tcp::no_delay(true));
    self->io_->ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
    self->io_->ws.set_option(websocket::stream_base::decorator([request](websocket::request_type& r) {
      if (!request.api_key.empty()) r.set(beast::http::field::authorization, "Bearer " + request.api_key);
      if (!request.subprotocol.empty()) r.set(beast::http::field::sec_websocket_protocol, request.subprotocol);
    }));
    self->io_->ws.text(true);
    const std::string host = request.endpoint.address().to_string() + ":" + std::to_string(request.endpoint.port());
    self->io_->ws.async_handshake(host, request.target, [self, upgraded = std::move(upgraded)](beast::error_code ec) {
      upgraded(ec);
      if (!ec) self->read_next();
    });
  });
}

void load_socket::read_next() {
  io_->ws.async_read(io_->buffer, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) {
      if (!self->closing_ && self->on_closed) self->on_closed(ec);
      return;
    }
    auto data = self->io_->buffer.cdata();
    if (self->on_frame) self->on_frame({static_cast<const char*>(data.data()), data.size()});
    self->io_->buffer.consume(self->io_->buffer.size());
    self->read_next();
  });
}

void load_socket::send(std::string frame) {
  if (closing_) return;  // nothing follows a close
  writes_.push_back(std::move(frame));
  if (writes_.size() == 1) write_next();
}

void load_socket::write_next() {
  auto written = [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->writes_.pop_front();
    if (ec) {
      self->writes_.clear();
      return;  // the read loop reports the closed socket
    }
    if (!self->writes_.empty()) return self->write_next();
    if (self->closing_) self->close_now();
  };
  io_->ws.async_write(boost::asio::buffer(writes_.front()), std::move(written));
}

// Beast allows one write at a time, and a close is a write: it waits for the queue to drain.
void load_socket::close() {
  if (closing_) return;
  closing_ = true;
  if (writes_.empty()) close_now();
}

void load_socket::close_now() {
  io_->ws.async_close(websocket::close_code::normal, [self = shared_from_this()](beast::error_code) {});
}

}  // namespace xconn::load
