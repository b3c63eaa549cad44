// The irc plugin while the IRC server is away (adapters' shared rules: no answer is never a wrong credential), on
// the real server against Debian's ngircd on loopback:
// - a restart of xconn while ngircd is down shows the channel degraded (not offline), refuses replies retryable,
//   and turns it connected by itself once ngircd is back, joined again (the seconds it took are printed);
// - a running channel whose server goes away turns degraded and back to connected by itself;
// - a server that now refuses the kept password turns the channel revoked, at restore and on a reconnect.
#include "support/irc_outage_fixture.hpp"
#include "support/irc_test_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

namespace xconn::test {
namespace irc_outage_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

class irc_outage : public irc_outage_fixture {};

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
  irc_test_client ann(ircd.port(), "ann", irc_outage_password);
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
