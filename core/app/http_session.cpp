#include "core/app/http_session.hpp"

#include "core/app/http_routes.hpp"
#include "core/context/access.hpp"
#include "core/control/backup_stream.hpp"
#include "core/dataplane/ws_session.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/beast/core/string.hpp>
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

http_session::http_session(boost::asio::ip::tcp::socket&& socket, connection_slots::slot slot, server_context& ctx)
    : stream_(std::move(socket)), slot_(std::move(slot)), ctx_(ctx) {}

void http_session::run() {
  boost::asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&http_session::do_read, shared_from_this()));
}

void http_session::do_read() {
  header_parser_.emplace();
  header_parser_->header_limit(16 * 1024);
  header_parser_->body_limit(boost::none);  // decided per route once the header is known
  stream_.expires_after(read_timeout);
  http::async_read_header(stream_, buffer_, *header_parser_,
                          beast::bind_front_handler(&http_session::on_header, shared_from_this()));
}

void http_session::on_header(beast::error_code ec, std::size_t bytes) {
  if (ec) return on_read(ec, bytes);
  const auto& header = header_parser_->get();
  route_ = &route_for(ctx_, header);
  if (route_->body == route_body::streamed) return start_upload();  // checks the key before reading the body
  // The key is checked on the header: a caller without it gets no byte of its body read unless the route is public,
  // and public bodies are bounded across all connections (server.max_public_body_bytes).
  bool keyless = !authorized(ctx_, header);
  if (keyless && !open_without_key(*route_, ctx_, header)) return refuse_header(unauthorized(header));
  // Everything else is small: read the whole body, within the limit.
  auto length = header_parser_->content_length();
  if (length && *length > body_limit) return on_read(http::error::body_limit, bytes);
  if (keyless) {
    std::uint64_t reserve = header_parser_->is_done() ? 0 : length.value_or(body_limit);  // chunked: the most
    if (reserve > 0) {
      public_body_ = ctx_.public_bodies.take(reserve, ctx_.cfg.server.max_public_body_bytes);
      if (!public_body_) {
        auto busy = error_response(header, http::status::service_unavailable, "busy",
                                   "too many request bodies without an API key at once; retry later");
        busy.set(http::field::retry_after, "1");
        return refuse_header(std::move(busy));
      }
    }
  }
  parser_.emplace(std::move(*header_parser_));
  header_parser_.reset();
  parser_->body_limit(body_limit);
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
  if (route_->body == route_body::upgrade) return upgrade(std::move(req));
  if (ctx_.stopping) {
    auto res = error_response(req, http::status::service_unavailable, "shutting_down", "the server is stopping");
    res.keep_alive(false);
    return reply(std::move(res));
  }
  if (route_->body == route_body::backup) {
    stream_.expires_never();
    return std::make_shared<backup_stream>(std::move(stream_), std::move(slot_), ctx_)->run(req);
  }
  serve_route(*route_, ctx_, req, [self = shared_from_this()](file_answer answer) {
    // A plugin or the store's writer may answer from its own thread: write from this connection's strand.
    boost::asio::dispatch(self->stream_.get_executor(), [self, answer = std::move(answer)]() mutable {
      std::visit([&](auto& res) { self->send(std::move(res)); }, answer);
    });
  });
}

void http_session::refuse_header(http_response res) {
  // The body was not read: the connection cannot carry another request, and the lingering close discards it.
  res.keep_alive(false);
  header_parser_.reset();
  reply(std::move(res));
}

void http_session::start_upload() {
  auto checked = check_upload(ctx_, header_parser_->get());
  if (auto* refused = std::get_if<http_response>(&checked)) {
    refused->keep_alive(false);  // the body was not read
    header_parser_.reset();
    return reply(std::move(*refused));
  }
  upload_ = std::make_unique<file_upload>(ctx_, header_parser_->get().base(), std::get<upload_target>(std::move(checked)));
  upload_parser_.emplace(std::move(*header_parser_));
  header_parser_.reset();
  upload_parser_->body_limit(boost::none);  // the upload bounds itself by files.max_bytes
  const auto& files = ctx_.cfg.files;
  auto expected = upload_parser_->content_length().value_or(files.max_bytes);  // chunked: the most it may be
  upload_late_ = false;
  upload_deadline_.emplace(stream_.get_executor());
  upload_deadline_->expires_after(std::chrono::seconds(files.upload_grace_s) +
                                  std::chrono::seconds(expected / files.upload_min_bytes_per_s));
  upload_deadline_->async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || !self->upload_) return;
    self->upload_late_ = true;
    beast::error_code ignored;
    self->stream_.socket().cancel(ignored);  // a read under way ends now; the next one is not started
  });
  upload_buffer_.resize(64 * 1024);
  // Beast reads as much as the buffer's free capacity (512 bytes at least): after a small header that is a few
  // hundred bytes a read, and a 1 MiB upload took thousands of reads. 64 KiB of room: a chunk per read.
  buffer_.reserve(64 * 1024);
  auto expect = upload_parser_->get().find(http::field::expect);
  if (expect == upload_parser_->get().end() || !beast::iequals(expect->value(), "100-continue"))
    return upload_step(file_upload::step::more);  // an empty body is already complete
  // The client waits for a go-ahead before sending the body (curl does for large files).
  auto go_ahead = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
  http::async_write(stream_, *go_ahead, [self = shared_from_this(), go_ahead](beast::error_code ec, std::size_t) {
    if (ec) return self->upload_.reset();
    self->upload_step(file_upload::step::more);
  });
}

void http_session::read_upload() {
  auto& body = upload_parser_->get().body();
  body.data = upload_buffer_.data();
  body.size = upload_buffer_.size();
  if (upload_late_) return upload_timed_out();
  stream_.expires_after(read_timeout);
  http::async_read_some(stream_, buffer_, *upload_parser_,
                        beast::bind_front_handler(&http_session::on_upload_read, shared_from_this()));
}

void http_session::on_upload_read(beast::error_code ec, std::size_t) {
  if (ec == http::error::need_buffer) ec = {};  // the buffer is full: not an error
  if (upload_late_) return upload_timed_out();
  if (ec) {
    // The client went away, timed out or broke the framing: what was written of the file is erased.
    upload_.reset();
    upload_parser_.reset();
    return;
  }
  std::size_t got = upload_buffer_.size() - upload_parser_->get().body().size;
  upload_step(upload_->consume({upload_buffer_.data(), got}));
}

void http_session::upload_step(file_upload::step s) {
  using step = file_upload::step;
  if (s == step::failed) return upload_failed();
  if (s == step::wait) {
    // The store is behind: read on only when it caught up, so at most a bounded part of the file is in memory.
    return upload_->when_ready([self = shared_from_this()] {
      boost::asio::dispatch(self->stream_.get_executor(), [self] { self->upload_step(step::more); });
    });
  }
  if (!upload_parser_->is_done()) return read_upload();
  if (upload_->end_of_body() == step::failed) return upload_failed();
  upload_->finish([self = shared_from_this()](http_response res) {
    boost::asio::dispatch(self->stream_.get_executor(), [self, res = std::move(res)]() mutable {
      res.keep_alive(self->upload_parser_->get().keep_alive());
      self->upload_.reset();
      self->upload_parser_.reset();
      self->reply(std::move(res));
    });
  });
}

void http_session::upload_timed_out() {
  spdlog::warn("files: an upload was still arriving past files.upload_grace_s + its size / "
               "files.upload_min_bytes_per_s; answered 408, what arrived is erased");
  auto res = error_response(upload_parser_->get(), http::status::request_timeout, "upload_timeout",
                            "the body did not arrive in time (files.upload_min_bytes_per_s)");
  res.keep_alive(false);
  upload_.reset();
  upload_parser_.reset();
  reply(std::move(res));
}

void http_session::upload_failed() {
  auto res = upload_->failure();
  res.keep_alive(false);  // the rest of the body is not read: the lingering close swallows it
  upload_.reset();
  upload_parser_.reset();
  reply(std::move(res));
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
  std::make_shared<ws_session>(stream_.release_socket(), std::move(slot_), ctx_, std::move(conn))->run(std::move(req), select);
}

void http_session::reply(http_response res) { send(std::move(res)); }

template <class Body>
void http_session::send(http::response<Body> res) {
  // The request is done: its body's bytes go back to the budget before the answer leaves, so a client that has its
  // answer never finds its own request still counted.
  public_body_.reset();
  auto message = std::make_shared<http::response<Body>>(std::move(res));
  response_ = message;
  bool keep_alive = message->keep_alive();
  http::async_write(stream_, *message,
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
