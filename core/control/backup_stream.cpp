#include "core/control/backup_stream.hpp"

#include "core/context/access.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

namespace xconn {
namespace beast = boost::beast;
namespace http = beast::http;

namespace {
constexpr std::chrono::seconds write_limit{60};  // a client that takes no bytes for this long is dropped
}

backup_stream::backup_stream(beast::tcp_stream&& stream, connection_slots::slot slot, server_context& ctx)
    : stream_(std::move(stream)), slot_(std::move(slot)), ctx_(ctx) {}

backup_stream::~backup_stream() {
  // Closing the read end makes a copy still writing fail (EPIPE), so its thread ends.
  if (pipe_) {
    beast::error_code ignored;
    pipe_->close(ignored);
  }
}

void backup_stream::refuse(http_response res) {
  res.keep_alive(false);
  auto message = std::make_shared<http_response>(std::move(res));
  http::async_write(stream_, *message, [self = shared_from_this(), message](beast::error_code, std::size_t) {
    beast::error_code ignored;
    self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  });
}

void backup_stream::run(const http_request_header& req) {
  if (!authorized(ctx_, req)) return refuse(unauthorized(req));
  if (req.method() != http::verb::get)
    return refuse(error_response(req, http::status::method_not_allowed, "method_not_allowed", "use GET"));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return refuse(error_response(req, http::status::internal_server_error, "backup_failed", "cannot open a pipe"));
  auto copied = copied_;
  bool started = ctx_.db.copy_compacted(fds[1], [copied](std::error_code ec) {
    copied->error = ec;
    copied->done = true;
  });
  if (!started) {
    ::close(fds[0]);
    ::close(fds[1]);
    return refuse(error_response(req, http::status::conflict, "backup_running", "a backup is already running"));
  }
  pipe_ = std::make_unique<boost::asio::posix::stream_descriptor>(stream_.get_executor(), fds[0]);
  spdlog::info("backup: started");

  auto head = std::make_shared<http::response<http::empty_body>>(http::status::ok, req.version());
  head->set(http::field::server, "xconn");
  head->set(http::field::content_type, "application/octet-stream");
  head->set(http::field::content_disposition, "attachment; filename=\"data.mdb\"");
  head->set(http::field::cache_control, "no-store");
  head->keep_alive(false);
  head->chunked(true);
  auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*head);
  stream_.expires_after(write_limit);
  http::async_write_header(stream_, *serializer,
                           [self = shared_from_this(), head, serializer](beast::error_code ec, std::size_t) {
                             if (!ec) self->read_more();
                           });
}

void backup_stream::read_more() {
  pipe_->async_read_some(boost::asio::buffer(buffer_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
    if (ec == boost::asio::error::eof) return self->finish();
    if (ec) return;
    self->stream_.expires_after(write_limit);
    boost::asio::async_write(self->stream_, http::make_chunk(boost::asio::buffer(self->buffer_.data(), n)),
                             [self, n](beast::error_code ec, std::size_t) {
                               if (ec) {
                                 spdlog::warn("backup: the client went after {} bytes: {}", self->sent_, ec.message());
                                 return;
                               }
                               self->sent_ += n;
                               self->read_more();
                             });
  });
}

void backup_stream::finish() {
  // The copy thread records its outcome before it closes the write end, so it is known at end of stream.
  if (!copied_->done || copied_->error) {
    spdlog::error("backup: the copy failed after {} bytes; the body ends without its last chunk", sent_);
    beast::error_code ignored;
    stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    return;
  }
  boost::asio::async_write(stream_, http::make_chunk_last(), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (!ec) spdlog::info("backup: sent {} bytes", self->sent_);
    beast::error_code ignored;
    self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  });
}

}  // namespace xconn
