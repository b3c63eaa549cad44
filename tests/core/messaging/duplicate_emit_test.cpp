// A duplicate emit (its msg_id taken on the channel) is answered with the first message's message_id: at once,
// after the message was acknowledged and gone from the queue, and after the real daemon was killed and started
// again (the id is kept with the msg_id in LMDB). Echo's /inject hands the host's answer back as JSON.
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

TEST(duplicate_emit, is_answered_with_the_first_message_id_also_after_a_daemon_restart) {
  const std::string key = "xck_duplicate_key_0123456789abcdef";
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", test_daemon_config(plugin_dir()));
  std::map<std::string, std::string> auth{{"Authorization", "Bearer " + key}};
  unsigned short port = 0;
  auto d = start_test_daemon(dir.path(), key, port);
  ASSERT_NE(port, 0);
  std::string channel, connector_id;
  auto inject = [&](const std::string& msg_id) {
    return http_call(port, "POST", "/connectors/echo/inject", auth,
                     json::serialize(json::object{{"connector_channel_id", channel}, {"text", "once"}, {"msg_id", msg_id}}));
  };
  std::string first;
  {
    auto c = dp_client::connect(port, key);
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    auto r = inject("platform-7");
    ASSERT_EQ(r.status, 202) << r.body;
    EXPECT_EQ(r.json().at("duplicate"), json::value(false)) << r.body;
    first = text_of(r.json().as_object(), "message_id");
    ASSERT_FALSE(first.empty()) << r.body;

    r = inject("platform-7");
    ASSERT_EQ(r.status, 202) << r.body;
    EXPECT_EQ(r.json().at("duplicate"), json::value(true)) << r.body;
    EXPECT_EQ(text_of(r.json().as_object(), "message_id"), first) << "a duplicate names the first message";

    auto m = c->next_push("chat.message", channel);
    ASSERT_TRUE(m);
    EXPECT_EQ(text_of(payload_of(*m), "message_id"), first);
    c->send("chat.message.ack", {{"message_id", first}, {"status", "accepted"}}, channel);
    EXPECT_FALSE(c->next_push("chat.message", channel, 300ms)) << "the duplicate was not delivered";
    r = inject("platform-7");  // acknowledged and erased from the queue: the msg_id still names it
    EXPECT_EQ(text_of(r.json().as_object(), "message_id"), first) << r.body;
  }
  d->signal(SIGKILL);
  ASSERT_EQ(d->wait_exit(), 128 + SIGKILL);
  d = start_test_daemon(dir.path(), key, port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, key, "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  auto r = inject("platform-7");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.json().at("duplicate"), json::value(true)) << r.body;
  EXPECT_EQ(text_of(r.json().as_object(), "message_id"), first) << "the answer survives a restart";
  EXPECT_FALSE(c->next_push("chat.message", channel, 300ms));
  // Another msg_id is a new message with an id of its own.
  r = inject("platform-8");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.json().at("duplicate"), json::value(false)) << r.body;
  EXPECT_NE(text_of(r.json().as_object(), "message_id"), first);
}

}  // namespace
}  // namespace xconn::test
