// One HTTP connection: reads a request's header and checks the API key on it (a keyless request on a keyed route is
// answered 401 before any of its body is read; a public route's body counts against the server's public budget),
// then either streams an upload's body into the file store or reads the whole (small, limited) body and answers the
// control plane, a plugin route or a download; hands an authorized `{base}/ws` upgrade to a ws_session. Every read
// has a timeout.
#pragma once

#include <array>

#include "core/app/http_routes.hpp"
#include "core/control/file_routes.hpp"
#include "core/control/file_upload.hpp"
#include "core/wire/http_types.hpp"
#include "core/context/body_budget.hpp"
#include "core/context/connection_slots.hpp"
#include "core/context/server_context.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <memory>
#include <optional>
#include <vector>

namespace xconn {

class http_session : public std::enable_shared_from_this<http_session> {
 public:
  // Control-plane requests carry no large body; plugin routes (webhooks, echo's /inject) at most one message.
  static constexpr std::size_t body_limit = 1024 * 1024;
  static constexpr std::chrono::seconds read_timeout{30};
  static constexpr std::chrono::seconds linger_limit{2};

  http_session(boost::asio::ip::tcp::socket&& socket, connection_slots::slot slot, server_context& ctx);
  void run();

 private:
  void do_read();
  void on_header(boost::beast::error_code ec, std::size_t bytes);
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  void upgrade(http_request req);
  void refuse_header(http_response res);  // answers from the header alone, without reading the body
  void start_upload();
  void read_upload();
  void on_upload_read(boost::beast::error_code ec, std::size_t bytes);
  void upload_step(file_upload::step s);
  void upload_failed();
  void reply(http_response res);
  template <class Body>
  void send(boost::beast::http::response<Body> res);
  void on_write(bool keep_alive, boost::beast::error_code ec, std::size_t bytes);
  void drain();  // after the last answer: discard what the client still sends, for at most linger_limit

  boost::beast::tcp_stream stream_;
  connection_slots::slot slot_;  // handed to the ws_session on an upgrade
  boost::beast::flat_buffer buffer_;
  server_context& ctx_;
  const route_entry* route_ = nullptr;  // of the request being read
  std::optional<boost::beast::http::request_parser<boost::beast::http::empty_body>> header_parser_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::optional<body_budget::grant> public_body_;  // a keyless request's body, counted until it is answered
  std::optional<boost::beast::http::request_parser<boost::beast::http::buffer_body>> upload_parser_;
  std::unique_ptr<file_upload> upload_;
  // Fires files.upload_grace_s + the bytes expected / files.upload_min_bytes_per_s after the upload's header: the
  // body must have arrived by then however slowly it trickles (each read also has read_timeout).
  std::optional<boost::asio::steady_timer> upload_deadline_;
  bool upload_late_ = false;
  void upload_timed_out();
  std::vector<char> upload_buffer_;
  std::shared_ptr<void> response_;  // the message being written (any body type)
  bool draining_ = false;
  std::array<char, 16 * 1024> drain_buffer_{};
};

}  // namespace xconn
