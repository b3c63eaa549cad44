// One data-plane WebSocket (spec §6-8, protocol.md §2): reads packets on its strand, answers in order of
// completion, keeps its heartbeat, and closes with the codes the protocol names.
#pragma once

#include "core/connector.hpp"
#include "core/http_types.hpp"
#include "core/packet.hpp"
#include "core/server_context.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace xconn {

inline constexpr std::string_view data_plane_subprotocol = "xagent.connector.packet.v1";

class ws_session : public std::enable_shared_from_this<ws_session> {
 public:
  ws_session(boost::asio::ip::tcp::socket&& socket, server_context& ctx, std::shared_ptr<connector> conn);
  ~ws_session();

  // Completes the upgrade of req (already authorized), selecting subprotocol when offered.
  void run(http_request req, bool select_subprotocol);

  // Closes with 1001 (server going away); safe from any thread.
  void shut_down();

 private:
  using clock = std::chrono::steady_clock;

  void on_accept(boost::beast::error_code ec);
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  // Returns false when reading must wait (the hello is being committed).
  bool handle_frame(std::string_view frame);
  void handle_hello(const packet_view& p);
  void send_error(const packet_view* request, std::string_view code, std::string_view message);
  void send(std::string text);
  void close_after_send(boost::beast::websocket::close_code code);
  void do_write();
  void on_write(boost::beast::error_code ec, std::size_t bytes);
  void do_close();
  void start_heartbeat();
  void on_heartbeat(boost::beast::error_code ec);

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::beast::flat_buffer buffer_;
  server_context& ctx_;
  std::shared_ptr<connector> connector_;
  packet_decoder decoder_;
  std::deque<std::string> outbox_;
  bool writing_ = false;
  std::optional<boost::beast::websocket::close_code> close_code_;  // close once the outbox drains
  bool closing_ = false;
  bool ping_in_flight_ = false;
  bool hello_done_ = false;
  std::string connector_id_;
  std::vector<std::string> profiles_;
  boost::asio::steady_timer heartbeat_;
  clock::time_point last_heard_;
};

}  // namespace xconn
