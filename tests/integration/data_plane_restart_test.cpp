// What survives a restart and a kill -9 (docs/protocol.md "Channels" and "Tools"): bindings, auth state,
// ownership, connector ids, and the replay records of side-effect tools.
#include "support/daemon_process.hpp"
#include "support/server_fixture.hpp"
#include "support/xagent_session.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace xconn::test {
namespace {
namespace json = boost::json;

std::string send_message(xagent_session& s, const std::string& channel, const std::string& call_id) {
  auto ack = s.invoke(channel, "echo_send_message", {{"text", "hi"}}, {{"tool_call_id", call_id}});
  return std::string(ack.at("payload").at("result").at("message_id").as_string());
}

TEST(restart, open_auth_restart_reopen_connected_logout_reopen_same_id) {
  server_fixture server;
  server.start();
  std::string connector_id, channel, message_id;
  {
    xagent_session s(server.port(), server.key());
    connector_id = s.connector_id();
    channel = std::string(s.open().at("connector_channel_id").as_string());
    ASSERT_EQ(s.sign_in(channel, "restart-test-token").at("payload").at("status"), "authenticated");
    message_id = send_message(s, channel, "call_restart");
  }
  server.stop();
  server.start();
  {
    xagent_session s(server.port(), server.key(), "echo", "im.echo", connector_id);
    EXPECT_EQ(s.connector_id(), connector_id);
    auto reopened = s.open(channel);
    EXPECT_EQ(reopened.at("connector_channel_id").as_string(), channel);
    EXPECT_EQ(status_of_descriptor(reopened), "connected");
    EXPECT_EQ(descriptor_of(reopened).at("target").at("display_name"), "Echo user");
    EXPECT_EQ(s.invoke(channel, "echo_reverse", {{"text", "ab"}}).at("payload").at("result").at("text"), "ba");
    EXPECT_EQ(send_message(s, channel, "call_restart"), message_id) << "a replay record must survive a restart";
    EXPECT_EQ(s.call("auth.logout", channel).at("payload").at("status"), "ok");
  }
  server.stop();
  server.start();
  xagent_session s(server.port(), server.key(), "echo", "im.echo", connector_id);
  auto again = s.open(channel);
  EXPECT_EQ(again.at("connector_channel_id").as_string(), channel) << "a channel stays persistent after logout";
  EXPECT_EQ(status_of_descriptor(again), "created");
}

TEST(restart, a_temporary_channel_does_not_survive_a_restart) {
  server_fixture server;
  server.start();
  std::string channel;
  {
    xagent_session s(server.port(), server.key());
    channel = std::string(s.open().at("connector_channel_id").as_string());
  }
  server.stop();
  server.start();
  xagent_session s(server.port(), server.key());
  EXPECT_NE(s.open(channel).at("connector_channel_id").as_string(), channel);
}

TEST(restart, a_sign_in_acked_just_before_kill_9_is_still_there) {
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml",
             "server:\n  listen: \"127.0.0.1:0\"\n  api_keys: [\"" + test_api_key + "\"]\nstore:\n  path: \"./var\"\n"
             "  map_size_bytes: 67108864\nplugins:\n  dir: \"" + plugin_dir().string() + "\"\n");
  std::string connector_id, channel;
  {
    daemon_process d({"--config", "xconnd.yaml"}, dir.path());
    auto port = d.wait_listening();
    ASSERT_NE(port, 0) << d.console();
    xagent_session s(port, test_api_key);
    connector_id = s.connector_id();
    channel = std::string(s.open().at("connector_channel_id").as_string());
    ASSERT_EQ(s.sign_in(channel, "kill-test-token").at("payload").at("status"), "authenticated");
    d.signal(SIGKILL);  // right after the ack: it was sent only once the record was committed
    EXPECT_EQ(d.wait_exit(), 128 + SIGKILL);
  }
  daemon_process d({"--config", "xconnd.yaml"}, dir.path());
  auto port = d.wait_listening();
  ASSERT_NE(port, 0) << d.console();
  xagent_session s(port, test_api_key, "echo", "im.echo", connector_id);
  EXPECT_EQ(s.connector_id(), connector_id);
  auto reopened = s.open(channel);
  EXPECT_EQ(reopened.at("connector_channel_id").as_string(), channel);
  EXPECT_EQ(status_of_descriptor(reopened), "connected");
}

}  // namespace
}  // namespace xconn::test
