// A restored irc channel whose nick a ghost still holds (a client of our own nick, left over), on the real server
// against Debian's ngircd on loopback: the restore answers degraded with the reason nick_in_use (not
// target_unreachable, not revoked: the nick is ours, only taken for now), and once the ghost quits the connection
// takes the nick by itself and the channel turns connected (docs/irc.md "Restore").
#include "support/data_plane.hpp"
#include "support/irc_test_client.hpp"
#include "support/ngircd_server.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace xconn::test {
namespace irc_ghost_nick_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string kept_password = "planted-outage-pass-7d2a";

class irc_ghost_nick : public ::testing::Test {
 protected:
  irc_ghost_nick() : ircd(kept_password) {}
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

TEST_F(irc_ghost_nick, a_channel_restored_while_a_ghost_holds_its_nick_is_degraded_nick_in_use_then_connected) {
  auto channel = bound("xbot", "#ops");
  ASSERT_FALSE(channel.empty());
  std::unique_ptr<irc_test_client> ghost;
  restart_during(channel, [&] {
    ghost = std::make_unique<irc_test_client>(ircd.port(), "xbot", kept_password);
    ASSERT_TRUE(ghost->registered()) << "xconn's connection let go of the nick when it stopped";
  });
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 20s)) << status_of(channel);
  EXPECT_EQ(listed_reason(channel), "nick_in_use");
  ghost.reset();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 70s)) << status_of(channel);
  EXPECT_EQ(listed_reason(channel), "");
}

}  // namespace irc_ghost_nick_cases
}  // namespace xconn::test
