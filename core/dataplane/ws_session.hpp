// One data-plane WebSocket (spec §6-8, docs/protocol.md "Data plane"): reads packets on its strand, answers in order of
// completion, keeps its heartbeat, and closes with the codes the protocol names.
#pragma once

#include "core/channels/channel_table.hpp"
#include "core/plugin_host/connector.hpp"
#include "core/wire/http_types.hpp"
#include "core/wire/packet.hpp"
#include "core/context/connection_slots.hpp"
#include "core/context/server_context.hpp"
#include "core/messaging/budgeted_route.hpp"
#include "core/messaging/outbox_budget.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/system/error_code.hpp>


#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace xconn {

inline constexpr std::string_view data_plane_subprotocol = "xagent.connector.packet.v1";

class ws_session : public std::enable_shared_from_this<ws_session>, public channel_route, public data_socket,
                   public budgeted_route {
 public:
  // Requests handed to the plugin and not yet answered, per socket; past it the socket is not read.
  static constexpr int max_in_flight = 1024;

  ws_session(boost::asio::ip::tcp::socket&& socket, connection_slots::slot slot, server_context& ctx,
             std::shared_ptr<connector> conn);
  ~ws_session();

  // Completes the upgrade of req (already authorized), selecting subprotocol when offered.
  void run(http_request req, bool select_subprotocol);

  // Closes with 1001 (server going away); safe from any thread.
  void shut_down() override;
  void abort() override;
  const std::string& plugin_id() const override { return connector_->id(); }

  // channel_route: pushes from any thread; the hello's outcome, fixed before any channel is opened.
  void push(std::string packet) override { deliver(std::move(packet)); }
  void push(std::string packet, std::function<void(bool written)> written) override;
  const std::vector<std::string>& profiles() const override { return profiles_; }
  const std::string& connector_id() const override { return connector_id_; }

  // budgeted_route: deliveries stop at server.max_outbox_bytes and resume below a quarter of it.
  bool push_within_budget(std::string& packet, std::function<void(bool written)> written) override;
  bool holding_deliveries() const override { return budget_.holding(); }
  void when_drained(std::function<void()> fn) override { budget_.when_drained(std::move(fn)); }
  std::uint64_t outbox_bytes() const override { return budget_.bytes(); }
  std::uint64_t outbox_peak_bytes() const override { return budget_.peak(); }

 private:
  using clock = std::chrono::steady_clock;

  void on_accept(boost::system::error_code ec);
  void do_read();
  void on_read(boost::system::error_code ec, std::size_t bytes);
  // Returns false when reading must wait (the hello is being committed).
  bool handle_frame(std::string_view frame);  // false: reading waits for an answer
  void dispatch(const packet_view& p);
  void handle_hello(const packet_view& p);
  void send_error(const packet_view* request, std::string_view code, std::string_view message);
  void send(std::string text, std::function<void(bool)> written = {});  // on the session's strand
  // A frame counted in budget_ already (posted from another thread) goes to the outbox; on the strand.
  void send_counted(std::string text, std::function<void(bool)> written);
  void deliver(std::string text);  // from any thread
  // The answer to a request that went to the plugin (each exactly once); from any thread. Reading pauses
  // while max_in_flight such requests wait, so a flood waits in the client's socket, not in our memory.
  void deliver_answer(std::string text);
  boost::asio::any_io_executor strand() const;  // the socket's: where its handlers and writes run

  // User-level packets after the hello (ws_requests.cpp). Each answer is built from copies: the packet's
  // views die with the next frame, and most answers come later from the plugin pool or the store.
  // One row per packet type (packet_handlers.cpp). Every handler has the same shape: the packet, the channel it
  // names (checked, or empty when the packet needs none) and its payload (empty unless the row reads it).
  using packet_handler_fn = void(const packet_view& p, const channel& c, const boost::json::object& payload);
  using packet_fn = packet_handler_fn ws_session::*;
  struct packet_handler;
  static const packet_handler* handler_for(std::string_view type);
  bool im_v2_negotiated() const;
  // The routing checks of docs/protocol.md "Data plane" for a packet naming a channel; answers the error and returns
  // false.
  bool check_route(const packet_view& p, channel& c);
  packet_handler_fn on_ping, on_pong, on_hello, on_error;                   // ws_session.cpp
  packet_handler_fn on_channel_open, on_channel_close, on_descriptor_get;  // ws_requests.cpp
  packet_handler_fn on_auth_start, on_auth_status, on_auth_cancel, on_auth_logout, on_tool_invoke;
  // IM v2 packets (ws_messages.cpp): dropped silently unless this socket negotiated xagent.im.v2.
  packet_handler_fn on_chat_message, on_chat_delta, on_chat_ack, on_chat_activity;
  // Sends ack with c's descriptor once c's new state is durable; an error instead when it could not be
  // recorded (ec) or the channel is gone. Returns whether the ack went out. Any thread.
  bool deliver_with_descriptor(outgoing_packet ack, const std::optional<channel>& c, std::error_code ec);
  // Where an auth call into the plugin runs (the channel's strand) and its limit (tools.timeout_s). auth_call_on
  // counts the call as in flight until its answer goes out through deliver_answer.
  connector::strand auth_call_on(const std::string& channel_id);
  std::chrono::milliseconds auth_timeout() const;
  // Turns a plugin's auth answer into the ack; records the run's end and the login. A qr_refresh_required answer is
  // refreshed at once (refreshed: this answer is that refresh's, passed on as it is).
  void finish_auth(outgoing_packet ack, std::string run_id, std::vector<std::string> secrets, call_result r,
                   bool for_status, bool refreshed = false);
  void close_after_send(boost::beast::websocket::close_code code);
  void do_write();
  void on_write(boost::system::error_code ec, std::size_t bytes);
  void do_close();
  void start_heartbeat();
  void on_heartbeat(boost::system::error_code ec);

  struct connection;  // the Beast stream and its read buffer, instantiated in ws_session.cpp alone
  std::unique_ptr<connection> io_;
  connection_slots::slot slot_;  // one of server.max_connections, given back when the session ends
  server_context& ctx_;
  std::shared_ptr<connector> connector_;
  packet_decoder decoder_;
  struct outgoing_frame {
    std::string text;
    std::function<void(bool written)> written;  // optional
  };
  void drop_outbox();  // tells each waiting frame's sender it was not written
  std::deque<outgoing_frame> outbox_;
  std::uint64_t outbox_bytes_ = 0;  // of outbox_, the frame being written included, until written
  // outbox_bytes_ plus the frames posted to the strand and not yet in outbox_: what server.max_outbox_bytes
  // bounds, read by the threads that deliver.
  outbox_budget budget_;
  clock::time_point last_write_progress_;  // a frame written, or the outbox no longer empty
  void drop_unread();
  bool writing_ = false;
  std::optional<boost::beast::websocket::close_code> close_code_;  // close once the outbox drains
  bool closing_ = false;
  bool ping_in_flight_ = false;
  bool hello_done_ = false;
  bool hold_reading_ = false;  // set by a packet whose answer resumes reading (hello)
  int in_flight_ = 0;         // requests handed to the plugin whose answers are not yet written
  bool read_paused_ = false;  // at max_in_flight, or the outbox past half its budget
  void resume_reading_if_room();
  std::string connector_id_;
  std::vector<std::string> profiles_;
  boost::asio::steady_timer heartbeat_;
  clock::time_point last_heard_;
  clock::time_point accepted_at_;  // the hello deadline counts from here
};

}  // namespace xconn
