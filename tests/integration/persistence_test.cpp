// What survives a restart: authenticated channels (owner, binding, auth state), their staying persistent after a
// logout, and the stored acks of side-effect tools; across a clean stop and across a kill -9 of the real xconnd
// (; docs/protocol.md "Channels", "Tools").
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace xconn::test {
namespace {
namespace json = boost::json;

const std::vector<std::string> both_profiles{"xagent.im.v1", "xagent.im.v2"};

std::string status_of(const json::object& ack) {
  return text_of(descriptor_in(ack)["connection"].as_object(), "status");
}

json::object send_message(dp_client& c, const std::string& channel, const std::string& call) {
  auto ack = c.request("tool.invoke",
                       {{"tool_id", "echo_send_message"},
                        {"arguments", {{"text", "persisted hello"}}},
                        {"context", {{"tool_call_id", call}}}},
                       channel, std::chrono::seconds(10));
  EXPECT_TRUE(ack);
  if (!ack) return {};
  EXPECT_EQ(ack->at("type"), "tool.invoke.ack");
  EXPECT_EQ(error_code(*ack), "") << json::serialize(*ack);
  return payload_of(*ack);
}

TEST(persistence, an_authenticated_channel_survives_a_restart_and_stays_persistent_after_logout) {
  server_fixture server;
  server.start();
  std::string connector_id, channel, temporary, hint;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated("tok-persist-1");
    ASSERT_FALSE(channel.empty());
    auto d = c->get_descriptor(channel);
    ASSERT_TRUE(d);
    hint = text_of(descriptor_in(*d)["target"].as_object(), "account_hint");  // keyed by the store: kept
    temporary = c->open();  // never signed in: memory only
    ASSERT_FALSE(temporary.empty());
  }
  server.stop();
  server.start();  // the same store folder

  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->connector_id(), connector_id);
  auto ack = c->open_channel(channel);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("connector_channel_id"), json::value(channel));
  expect_descriptor(payload_of(*ack)["connection_descriptor"],
                    signed_in_descriptor(channel, connector_id, both_profiles, hint),
                    c->card(), "reopened after restart");
  auto tool = c->invoke(channel, "echo_reverse", {{"text", "abc"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "");
  EXPECT_EQ(text_of(payload_of(*tool)["result"].as_object(), "text"), "cba");

  // The temporary channel did not survive.
  std::string renewed = c->open(temporary);
  EXPECT_FALSE(renewed.empty());
  EXPECT_NE(renewed, temporary);

  // A logout keeps the channel persistent: after another restart the id is still known, signed out.
  auto out = c->request("auth.logout", {}, channel);
  ASSERT_TRUE(out);
  EXPECT_EQ(text_of(payload_of(*out), "status"), "ok");
  c.reset();
  server.stop();
  server.start();
  auto after = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(after);
  auto reopened = after->open_channel(channel);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->at("connector_channel_id"), json::value(channel));
  expect_descriptor(payload_of(*reopened)["connection_descriptor"],
                    signed_out_descriptor(channel, connector_id, both_profiles),
                    after->card(), "reopened after logout and restart");
}

TEST(persistence, the_owner_moves_and_survives_a_restart) {
  server_fixture server;
  server.start();
  std::string channel, new_owner;
  {
    auto first = dp_client::connect(server.port(), server.key());
    auto second = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(first && second);
    channel = first->open_authenticated();
    ASSERT_FALSE(channel.empty());
    ASSERT_EQ(second->open(channel), channel);
    new_owner = second->connector_id();
  }
  server.stop();
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", new_owner}});
  ASSERT_TRUE(c);
  auto get = c->open_channel(channel);
  ASSERT_TRUE(get);
  EXPECT_EQ(descriptor_in(*get)["connection"].as_object()["connector_id"], json::value(new_owner));
  EXPECT_EQ(status_of(*get), "connected");
}

TEST(persistence, a_side_effect_tools_ack_is_returned_again_after_a_restart) {
  server_fixture server;
  server.start();
  std::string connector_id, channel;
  json::object first;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
    first = send_message(*c, channel, "call_persist_1");
    ASSERT_FALSE(text_of(first["result"].as_object(), "message_id").empty()) << first;
  }
  server.stop();
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_EQ(c->open(channel), channel);
  EXPECT_EQ(send_message(*c, channel, "call_persist_1"), first);
  EXPECT_NE(send_message(*c, channel, "call_persist_2"), first);
}

// The real daemon, killed with SIGKILL: what was acknowledged was already durable.
class persistence_daemon : public ::testing::Test {
 protected:
  const std::string key = "xck_persistence_key_0123456789abcdef";

  void SetUp() override {
    write_file(dir.path() / "xconnd.yaml", test_daemon_config(plugin_dir()));
  }
  std::unique_ptr<daemon_process> start(unsigned short& port) { return start_test_daemon(dir.path(), key, port); }
  void kill9(daemon_process& d) {
    d.signal(SIGKILL);
    EXPECT_EQ(d.wait_exit(), 128 + SIGKILL);
  }

  temp_dir dir;
};

TEST_F(persistence_daemon, an_authentication_acknowledged_just_before_a_kill_9_survives) {
  unsigned short port = 0;
  auto d = start(port);
  ASSERT_NE(port, 0);
  std::string connector_id, channel;
  {
    auto c = dp_client::connect(port, key);
    ASSERT_TRUE(c) << d->console();
    connector_id = c->connector_id();
    channel = c->open();
    auto ack = c->authenticate(channel);
    ASSERT_TRUE(ack);
    // Killed as soon as the ack is in: it is only sent once the record is committed.
    kill9(*d);
    ASSERT_EQ(text_of(payload_of(*ack), "status"), "authenticated");
  }
  auto again = start(port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, key, "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c) << again->console();
  EXPECT_EQ(c->connector_id(), connector_id);
  auto ack = c->open_channel(channel);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("connector_channel_id"), json::value(channel));
  expect_descriptor(payload_of(*ack)["connection_descriptor"],
                    signed_in_descriptor(channel, connector_id, both_profiles, good_token_hint),
                    c->card(), "reopened after kill -9");
  auto tool = c->invoke(channel, "echo_reverse", {{"text", "abc"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(text_of(payload_of(*tool)["result"].as_object(), "text"), "cba");
}

TEST_F(persistence_daemon, a_side_effect_tools_ack_survives_a_kill_9) {
  unsigned short port = 0;
  auto d = start(port);
  ASSERT_NE(port, 0);
  std::string connector_id, channel;
  json::object first;
  {
    auto c = dp_client::connect(port, key);
    ASSERT_TRUE(c) << d->console();
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
    first = send_message(*c, channel, "call_kill_1");
    kill9(*d);  // right after the ack: it was committed before it was sent
    ASSERT_FALSE(text_of(first["result"].as_object(), "message_id").empty()) << first;
  }
  auto again = start(port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, key, "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c) << again->console();
  ASSERT_EQ(c->open(channel), channel);
  EXPECT_EQ(send_message(*c, channel, "call_kill_1"), first);
}

}  // namespace
}  // namespace xconn::test
