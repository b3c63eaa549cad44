// The inbound queue is durable: what was not acknowledged survives a restart of the server with its ids, order
// and msg_id window, and a kill -9 of the real daemon (docs/protocol.md "Inbound messages", "Outbound messages").
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

TEST(messaging_restart, unacknowledged_messages_survive_a_restart_with_their_ids_and_order) {
  server_fixture server;
  server.start();
  std::string channel, connector_id;
  std::vector<std::string> ids;
  std::map<std::string, std::string> auth{{"Authorization", "Bearer " + server.key()}};
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    c->request("channel.close", {}, channel);
    for (int i = 1; i <= 3; ++i) {
      auto r = http_call(server.port(), "POST", "/connectors/echo/inject", auth,
                         json::serialize(json::object{{"connector_channel_id", channel},
                                                      {"text", "kept #" + std::to_string(i)},
                                                      {"msg_id", "k" + std::to_string(i)}}));
      ASSERT_EQ(r.status, 202);
      ids.push_back(text_of(r.json().as_object(), "message_id"));
    }
  }
  server.stop();
  server.start();
  auth["Authorization"] = "Bearer " + server.key();
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  for (int i = 0; i < 3; ++i) {
    auto m = c->next_push("chat.message", channel);
    ASSERT_TRUE(m);
    EXPECT_EQ(text_of(payload_of(*m), "message_id"), ids[i]);
    EXPECT_EQ(text_of(payload_of(*m), "text"), "kept #" + std::to_string(i + 1));
    c->send("chat.message.ack", {{"message_id", ids[i]}, {"status", "accepted"}}, channel);
  }
  // The msg_id window survived too.
  auto r = http_call(server.port(), "POST", "/connectors/echo/inject", auth,
                     json::serialize(json::object{{"connector_channel_id", channel}, {"text", "kept #1"}, {"msg_id", "k1"}}));
  EXPECT_EQ(r.json().at("duplicate"), json::value(true)) << r.body;
}

// The real daemon, killed with SIGKILL while messages wait for a closed channel: an emit that was answered was
// already durable, so all of them arrive, in order, when the channel is opened after the restart.
TEST(messaging_kill9, queued_messages_survive_a_kill_9_and_drain_in_order) {
  const std::string key = "xck_messaging_key_0123456789abcdef";
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", test_daemon_config(plugin_dir()));
  auto start = [&](unsigned short& port) { return start_test_daemon(dir.path(), key, port); };
  std::map<std::string, std::string> auth{{"Authorization", "Bearer " + key}};
  unsigned short port = 0;
  auto d = start(port);
  ASSERT_NE(port, 0);
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(port, key);
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    c->request("channel.close", {}, channel);
  }
  constexpr int count = 50;
  for (int i = 1; i <= count; ++i) {
    auto r = http_call(port, "POST", "/connectors/echo/inject", auth,
                       json::serialize(json::object{{"connector_channel_id", channel}, {"text", "k9 #" + std::to_string(i)}}));
    ASSERT_EQ(r.status, 202) << r.body;
  }
  d->signal(SIGKILL);
  ASSERT_EQ(d->wait_exit(), 128 + SIGKILL);
  d = start(port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, key, "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  for (int i = 1; i <= count; ++i) {
    auto m = c->next_push("chat.message", channel);
    ASSERT_TRUE(m) << i;
    ASSERT_EQ(text_of(payload_of(*m), "text"), "k9 #" + std::to_string(i));
    c->send("chat.message.ack", {{"message_id", payload_of(*m).at("message_id")}, {"status", "accepted"}}, channel);
  }
  EXPECT_FALSE(c->next_push("chat.message", channel, 300ms));
}

}  // namespace
}  // namespace xconn::test
