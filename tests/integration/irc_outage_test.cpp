// The irc plugin while the IRC server is away (adapters' shared rules: no answer is never a wrong credential), on
// the real server against Debian's ngircd on loopback:
// - a restart of xconn while ngircd is down shows the channel degraded (not offline), refuses replies retryable,
//   and turns it connected by itself once ngircd is back, joined again (the seconds it took are printed);
// - a running channel whose server goes away turns degraded and back to connected by itself;
// - a server that now refuses the kept password turns the channel revoked, at restore and on a reconnect.
#include "support/data_plane.hpp"
#include "support/irc_test_client.hpp"
#include "support/ngircd_server.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

namespace xconn::test {
namespace irc_outage_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string kept_password = "planted-outage-pass-7d2a";

class irc_outage : public ::testing::Test {
 protected:
  irc_outage() : ircd(kept_password) {}
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "irc");
    ASSERT_TRUE(dp);
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  std::string bound(const std::string& nick, const std::string& target) {
    return dp->open_signed_in("irc_login", {{"server", ircd.address()}, {"nick", nick}, {"target", target},
                                            {"password", kept_password}});
  }
  // Stops xconn, lets `outage` happen to ngircd, starts xconn again on the same store and opens channel.
  template <class Outage>
  void restart_during(const std::string& channel, Outage outage) {
    auto connector_id = dp->connector_id();
    dp.reset();
    server.stop();
    outage();
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "irc", {{"connector_id", connector_id}});
    ASSERT_TRUE(dp);
    ASSERT_TRUE(dp->open_channel(channel));
  }
  std::string status_of(const std::string& channel) {
    auto d = dp->get_descriptor(channel);
    return d ? text_of(descriptor_in(*d)["connection"].as_object(), "status") : "";
  }
  // The status_reason GET {base}/channels shows for channel ("" for none).
  std::string listed_reason(const std::string& channel) {
    auto v = http_get(server.port(), "/connectors/irc/channels", server.key()).json();
    for (const auto& ch : v.at("channels").as_array())
      if (ch.at("connector_channel_id") == json::value(channel)) return text_of(ch.as_object(), "status_reason");
    return "";
  }
  // The status_reason of the channel's last ChannelStatusChanged on /events ("" for none).
  std::string last_change_reason(const std::string& channel) {
    auto v = http_get(server.port(), "/connectors/irc/events?limit=1000", server.key()).json();
    std::string reason;
    for (const auto& e : v.at("events").as_array())
      if (e.at("event_type") == "ChannelStatusChanged" && e.at("session_id") == json::value(channel))
        reason = text_of(e.at("payload").as_object(), "status_reason");
    return reason;
  }
  // A final's ack payload.
  json::object reply(const std::string& channel, const std::string& message_id) {
    auto ack = dp->request("chat.message", {{"message_id", message_id}, {"text", "anyone there?"}}, channel, 15s);
    return ack ? payload_of(*ack) : json::object{};
  }
  std::optional<json::object> next_message(const std::string& channel) {
    auto m = dp->next_push("chat.message", channel, 10s);
    if (!m) return std::nullopt;
    auto p = payload_of(*m);
    dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    return p;
  }
  // The replies refused while the server is away: retryable, never a sign-in matter.
  void expect_refused_retryable(const std::string& channel, const std::string& message_id) {
    auto p = reply(channel, message_id);
    EXPECT_EQ(text_of(p, "status"), "rejected") << json::serialize(p);
    EXPECT_EQ(text_of(p, "code"), "target_unreachable") << json::serialize(p);
    EXPECT_EQ(p.if_contains("retryable") ? p.at("retryable") : json::value(), json::value(true)) << json::serialize(p);
  }

  ngircd_server ircd;
  server_fixture server{{"irc.so"}, [](config& c) { c.connectors["irc"].config = json::object{}; }};
  std::unique_ptr<dp_client> dp;
};

TEST_F(irc_outage, a_channel_restored_while_the_server_is_away_is_degraded_then_connected_and_joined_by_itself) {
  auto channel = bound("xbot", "#ops");
  ASSERT_FALSE(channel.empty());
  restart_during(channel, [&] { ircd.kill(); });
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 20s)) << status_of(channel);
  expect_refused_retryable(channel, "while-away");
  // The plugin's reason shows on the admin list and /events, never in the descriptor.
  EXPECT_EQ(listed_reason(channel), "target_unreachable");
  EXPECT_EQ(last_change_reason(channel), "target_unreachable");
  EXPECT_EQ(json::serialize(*dp->get_descriptor(channel)).find("target_unreachable"), std::string::npos);

  auto back = std::chrono::steady_clock::now();
  ircd.start();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 70s)) << status_of(channel);
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - back).count();
  std::printf("irc outage: restored channel connected %.2f s after ngircd was back\n", seconds);
  EXPECT_LT(seconds, 65.0) << "the retries are at most 60 s apart";

  // Joined again by itself (the restore kept #ops wanted while the server was away): messages flow both ways.
  irc_test_client ann(ircd.port(), "ann", kept_password);
  ASSERT_TRUE(ann.registered());
  ASSERT_TRUE(ann.join("#ops"));
  ann.send("PRIVMSG #ops :you are back");
  auto m = next_message(channel);
  ASSERT_TRUE(m) << "the restored channel was not joined when the server came back";
  EXPECT_EQ(text_of(*m, "text"), "you are back");
  EXPECT_EQ(text_of(reply(channel, "after-outage"), "status"), "accepted");
}

TEST_F(irc_outage, a_running_channel_whose_server_goes_away_is_degraded_and_connected_again_by_itself) {
  auto channel = bound("xbot", "#ops");
  ASSERT_FALSE(channel.empty());
  ASSERT_EQ(status_of(channel), "connected");
  ircd.kill();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  EXPECT_TRUE(wait_until([&] { return listed_reason(channel) == "target_unreachable"; }, 5s));
  expect_refused_retryable(channel, "while-away");
  auto back = std::chrono::steady_clock::now();
  ircd.start();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 70s)) << status_of(channel);
  std::printf("irc outage: running channel connected %.2f s after ngircd was back\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - back).count());
  EXPECT_EQ(text_of(reply(channel, "after-outage"), "status"), "accepted");
}

TEST_F(irc_outage, a_server_that_now_refuses_the_kept_password_turns_the_restored_channel_revoked) {
  auto channel = bound("xbot", "#ops");
  ASSERT_FALSE(channel.empty());
  restart_during(channel, [&] {
    ircd.kill();
    ircd.set_password("a-password-changed-meanwhile");
    ircd.start();
  });
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "revoked"; }, 20s)) << status_of(channel);
  auto p = reply(channel, "after-refusal");
  EXPECT_EQ(text_of(p, "code"), "connection_not_authenticated") << json::serialize(p);
}

TEST_F(irc_outage, a_server_that_refuses_the_password_on_a_reconnect_turns_the_running_channel_revoked) {
  auto channel = bound("xbot", "#ops");
  ASSERT_FALSE(channel.empty());
  ircd.kill();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  ircd.set_password("a-password-changed-meanwhile");
  ircd.start();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "revoked"; }, 70s)) << status_of(channel);
}

}  // namespace irc_outage_cases
}  // namespace xconn::test
