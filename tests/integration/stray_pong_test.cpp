// A pong the server never pinged for, as a packet or as a WebSocket control frame, before the hello and after it:
// answered with nothing, and the socket stays open (the next frame the client reads is the pong of its own ping).
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = boost::asio::ip::tcp;

void expect_pong_of(const std::optional<json::object>& reply, const json::object& ping) {
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->at("type"), "pong") << json::serialize(*reply);
  EXPECT_EQ(reply->at("reply_to"), ping.at("packet_id"));
}

TEST(stray_pong, a_pong_packet_is_not_answered_before_or_after_the_hello) {
  server_fixture server;
  server.start();
  auto c = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "xagent.connector.packet.v1"});
  ASSERT_TRUE(c);
  for (bool after_hello : {false, true}) {
    if (after_hello) {
      ASSERT_TRUE(c->hello());
    }
    auto stray = make_packet("pong");
    stray["reply_to"] = "pkt_never_sent";
    c->send_json(stray);
    auto ping = make_packet("ping");
    c->send_json(ping);
    // Before the fix the stray pong drew hello_required (before the hello) or unsupported_packet (after it).
    expect_pong_of(c->receive_json(), ping);
  }
  EXPECT_FALSE(c->closed());
}

// The control frame: Beast takes an unsolicited pong as a sign of life; the data plane answers nothing either.
TEST(stray_pong, a_pong_control_frame_is_not_answered) {
  server_fixture server;
  server.start();
  boost::asio::io_context io;
  websocket::stream<beast::tcp_stream> ws(io);
  beast::get_lowest_layer(ws).expires_after(std::chrono::seconds(5));
  tcp::resolver resolver(io);
  beast::get_lowest_layer(ws).connect(resolver.resolve("127.0.0.1", std::to_string(server.port())));
  ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
    req.set(beast::http::field::authorization, "Bearer " + server.key());
    req.set(beast::http::field::sec_websocket_protocol, "xagent.connector.packet.v1");
  }));
  ws.handshake("127.0.0.1", "/connectors/echo/ws");
  ws.text(true);
  ws.pong({});
  auto ping = make_packet("ping");
  ws.write(boost::asio::buffer(json::serialize(ping)));
  beast::flat_buffer buffer;
  ws.read(buffer);
  auto reply = json::parse(beast::buffers_to_string(buffer.data()));
  ASSERT_TRUE(reply.is_object());
  expect_pong_of(reply.as_object(), ping);
  ws.close(websocket::close_code::normal);
}

}  // namespace
}  // namespace xconn::test
