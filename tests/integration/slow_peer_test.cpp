// A data-plane peer that stops reading (spec §8, docs/protocol.md "Limits"): what waits for it is bounded by
// server.max_outbox_bytes, past which the socket is closed with 1008; nothing it never acked is lost.
#include "support/data_plane.hpp"
#include "support/log_capture.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <set>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

TEST(slow_peer, a_peer_that_stops_reading_is_closed_with_1008_and_its_messages_come_again_on_the_next_socket) {
  log_capture logs;
  server_fixture server({"echo.so"}, [](config& c) {
    c.server.max_outbox_bytes = 65536;
    c.server.heartbeat_s = 1;  // a peer that read nothing past the budget for a heartbeat is dropped
    c.delivery.window = 1024;  // every message is pushed at once: far past the budget, for both sockets
  });
  server.start();
  std::map<std::string, std::string> auth{{"Authorization", "Bearer " + server.key()}};
  auto reader = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(reader);
  auto connector_id = reader->connector_id();
  auto channel = reader->open_authenticated();
  ASSERT_FALSE(channel.empty());

  // 400 messages of 60 KB (24 MB, far past any socket buffer) for a peer that reads nothing.
  constexpr int count = 400;
  const std::string text(60000, 'x');
  for (int i = 0; i < count; ++i) {
    auto r = http_call(server.port(), "POST", "/connectors/echo/inject", auth,
                       json::serialize(json::object{{"connector_channel_id", channel}, {"text", text},
                                                    {"msg_id", "m" + std::to_string(i)}}));
    ASSERT_EQ(r.status, 202) << r.body;
  }
  ASSERT_TRUE(wait_until([&] { return logs.text().find("closed with 1008") != std::string::npos; }, 30s));
  EXPECT_NE(logs.text().find("server.max_outbox_bytes 65536"), std::string::npos);
  // The peer gets 1008 if it reads again before the heartbeat's silence limit drops the connection (then it sees the
  // connection end): either way it is closed.
  auto code = reader->ws().wait_closed(30s);
  EXPECT_TRUE(code == 1008 || code == 0) << code;
  reader.reset();

  // The next socket gets every message again (none was acked), each once: it reads, so being past the budget
  // while 24 MB are pushed at once does not close it.
  auto again = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(again);
  ASSERT_TRUE(again->open_channel(channel));
  std::set<std::string> seen;
  while (seen.size() < static_cast<std::size_t>(count)) {
    auto m = again->next_push("chat.message", channel, 20s);
    if (!m) break;
    auto p = payload_of(*m);
    again->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    seen.insert(text_of(p, "message_id"));
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(count));
}

}  // namespace
}  // namespace xconn::test
