#include "core/http_session.hpp"

#include "core/control_plane.hpp"
#include "core/plugin_routes.hpp"
#include "core/ws_session.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/beast/websocket.hpp>

namespace xconn {
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// Sec-WebSocket-Protocol is a comma-separated list of tokens.
bool offers(std::string_view header, std::string_view token) {
  while (!header.empty()) {
    auto comma = header.find(',');
    auto item = header.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item == token) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

http_session::http_session(boost::asio::ip::tcp::socket&& socket, server_context& ctx)
    : stream_(std::move(socket)), ctx_(ctx) {}

void http_session::run() {
  boost::asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&http_session::do_read, shared_from_this()));
}

void http_session::do_read() {
  parser_.emplace();
  parser_->body_limit(body_limit);
  parser_->header_limit(16 * 1024);
  stream_.expires_after(read_timeout);
  http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&http_session::on_read, shared_from_this()));
}

void http_session::on_read(beast::error_code ec, std::size_t) {
  if (ec == http::error::end_of_stream) {
    stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
    return;
  }
  if (ec == http::error::body_limit || ec == http::error::header_limit) {
    http_request bare;
    bare.version(11);
    auto res = error_response(bare, http::status::payload_too_large, "payload_too_large", "request too large");
    res.keep_alive(false);
    return reply(std::move(res));
  }
  if (ec) return;
  http_request req = parser_->release();
  if (beast::websocket::is_upgrade(req)) return upgrade(std::move(req));
  if (ctx_.stopping) {
    auto res = error_response(req, http::status::service_unavailable, "shutting_down", "the server is stopping");
    res.keep_alive(false);
    return reply(std::move(res));
  }
  bool taken = serve_plugin_route(ctx_, req, [self = shared_from_this()](http_response res) {
    // The plugin answers on an I/O thread of its own choosing: write from this connection's strand.
    boost::asio::dispatch(self->stream_.get_executor(),
                          [self, res = std::move(res)]() mutable { self->reply(std::move(res)); });
  });
  if (!taken) reply(handle_control_request(ctx_, req));
}

void http_session::upgrade(http_request req) {
  auto parts = split_connector_path(req.target());
  auto conn = parts.plugin_id.empty() ? nullptr : ctx_.connectors.find(parts.plugin_id);
  auto refuse = [&](http::status status, std::string_view code, std::string_view message) {
    auto res = error_response(req, status, code, message);
    res.keep_alive(false);
    reply(std::move(res));
  };
  // The key is checked before anything else is revealed, and before the upgrade.
  if (!authorized(ctx_, req)) return refuse(http::status::unauthorized, "unauthorized", "a valid API key is required");
  if (!conn || parts.rest != "/ws") return refuse(http::status::not_found, "not_found", "no data plane here");
  if (ctx_.stopping) return refuse(http::status::service_unavailable, "shutting_down", "the server is stopping");
  auto offered = req.find(http::field::sec_websocket_protocol);
  bool select = false;
  if (offered != req.end()) {
    if (!offers(offered->value(), data_plane_subprotocol))
      return refuse(http::status::bad_request, "unsupported_subprotocol",
                    "offer the subprotocol xagent.connector.packet.v1");
    select = true;
  }
  stream_.expires_never();
  std::make_shared<ws_session>(stream_.release_socket(), ctx_, std::move(conn))->run(std::move(req), select);
}

void http_session::reply(http_response res) {
  response_ = std::make_shared<http_response>(std::move(res));
  bool keep_alive = response_->keep_alive();
  http::async_write(stream_, *response_,
                    beast::bind_front_handler(&http_session::on_write, shared_from_this(), keep_alive));
}

void http_session::on_write(bool keep_alive, beast::error_code ec, std::size_t) {
  response_.reset();
  if (ec) return;
  if (!keep_alive) {
    stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
    return drain();
  }
  do_read();
}

void http_session::drain() {
  // Closing with unread bytes sends a reset, which can destroy the answer (a 413 sent while the client is still
  // writing its body) before the client reads it. So read and discard what still comes, briefly: a lingering close.
  if (!draining_) {
    draining_ = true;
    stream_.expires_after(linger_limit);
  }
  stream_.async_read_some(boost::asio::buffer(drain_buffer_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            if (!ec) self->drain();
                          });
}

}  // namespace xconn
