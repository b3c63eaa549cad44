// One HTTP connection: reads requests with a body limit and a timeout, answers the control plane, and
// hands an authorized `{base}/ws` upgrade to a ws_session.
#pragma once

#include <array>

#include "core/http_types.hpp"
#include "core/server_context.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <memory>
#include <optional>

namespace xconn {

class http_session : public std::enable_shared_from_this<http_session> {
 public:
  // Control-plane requests carry no large body; plugin routes (webhooks, echo's /inject) at most one message.
  static constexpr std::size_t body_limit = 1024 * 1024;
  static constexpr std::chrono::seconds read_timeout{30};
  static constexpr std::chrono::seconds linger_limit{2};

  http_session(boost::asio::ip::tcp::socket&& socket, server_context& ctx);
  void run();

 private:
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  void upgrade(http_request req);
  void reply(http_response res);
  void on_write(bool keep_alive, boost::beast::error_code ec, std::size_t bytes);
  void drain();  // after the last answer: discard what the client still sends, for at most linger_limit

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  server_context& ctx_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<http_response> response_;
  bool draining_ = false;
  std::array<char, 16 * 1024> drain_buffer_{};
};

}  // namespace xconn
