// IRC paces its own lines (policy.lines_per_second), so its manifest declares no host cap on replies
// (chat.max_per_minute 0): against Debian's ngircd on a loopback port, twenty replies sent at once in one
// conversation are all accepted and all arrive, in order. With the host's default of 6 a minute (the manifest
// before), the 7th to the 20th were refused rate_limited although IRC would have carried them.
#include "support/data_plane.hpp"
#include "support/irc_test_client.hpp"
#include "support/ngircd_server.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace xconn::test::irc_reply_rate {
namespace json = boost::json;
using namespace std::chrono_literals;

TEST(irc_reply_rate, twenty_replies_in_a_minute_are_all_sent_none_rate_limited) {
  ngircd_server ircd;
  // Ten lines a second (the plugin allows up to 20) keeps the test to about two seconds; the host's rule under test
  // does not depend on the pace.
  server_fixture server{{"irc.so"}, [](config& c) {
                          c.connectors["irc"].config = json::object{};
                          c.connectors["irc"].policy = json::object{{"lines_per_second", 10}};
                        }};
  server.start();
  auto dp = dp_client::connect(server.port(), server.key(), "irc");
  ASSERT_TRUE(dp);
  irc_test_client ann(ircd.port(), "ann");
  ASSERT_TRUE(ann.registered());
  ASSERT_TRUE(ann.join("#ops"));
  auto channel = dp->open_signed_in("irc_login", {{"server", ircd.address()}, {"nick", "xbot"}, {"target", "#ops"}});
  ASSERT_FALSE(channel.empty());

  // The served skill says the same: no cap per minute, the connector's own pace.
  auto skill = http_get(server.port(), "/connectors/irc/skill.md", server.key()).body;
  EXPECT_NE(skill.find("no cap per minute"), std::string::npos) << skill;

  constexpr int replies = 20;
  std::vector<irc_test_client::said> got;
  std::thread reader([&] { got = ann.privmsgs_from("xbot", replies, 30s); });
  auto started = std::chrono::steady_clock::now();
  std::vector<json::object> sent;
  for (int i = 1; i <= replies; ++i)  // all at once: well within one minute of one conversation
    sent.push_back(dp->send("chat.message", {{"message_id", "reply-" + std::to_string(i)},
                                             {"text", "reply " + std::to_string(i)}}, channel));
  int accepted = 0;
  for (int i = 0; i < replies; ++i) {
    auto ack = dp->answer(sent[i], 30s);
    ASSERT_TRUE(ack) << "no answer to reply " << i + 1;
    auto p = payload_of(*ack);
    EXPECT_EQ(text_of(p, "status"), "accepted") << "reply " << i + 1 << ": " << json::serialize(*ack);
    EXPECT_NE(text_of(p, "code"), "rate_limited") << "reply " << i + 1;
    accepted += text_of(p, "status") == "accepted";
  }
  reader.join();
  EXPECT_EQ(accepted, replies);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(replies));
  for (int i = 0; i < replies; ++i) {
    EXPECT_EQ(got[i].target, "#ops");
    EXPECT_EQ(got[i].text, "reply " + std::to_string(i + 1));
  }
  std::printf("[ measure ] %d one-line replies sent at once: all %d arrived after %.2f s "
              "(policy.lines_per_second = 10)\n",
              replies, static_cast<int>(got.size()),
              std::chrono::duration<double>(got.back().at - started).count());
}

}  // namespace xconn::test::irc_reply_rate
