// A plugin's channel report may carry a reason, a short code such as target_unreachable ([a-z_]{1,64}): the host
// shows it as status_reason on /events (ChannelStatusChanged and the status record) and on GET {base}/channels while
// the reported status shows, never in the descriptor; "connected" clears it; a malformed one refuses the report; a
// report without one is taken as before. The fixture plugin lifecycle reports what its tool is given.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>


namespace xconn::test {
namespace status_reason_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

class status_reason : public ::testing::Test {
 protected:
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "lifecycle");
    ASSERT_TRUE(dp);
    channel = dp->open_signed_in("lifecycle_token", {{"token", "reason/ok"}});
    ASSERT_FALSE(channel.empty());
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }
  // Whether the host took the report.
  bool report(const json::object& arguments) {
    auto ack = dp->invoke(channel, "lifecycle_report", arguments);
    return ack && payload_of(*ack).at("result").at("taken") == true;
  }
  // The channel's entry in GET {base}/channels.
  json::object listed() {
    auto v = http_get(server.port(), "/connectors/lifecycle/channels", server.key()).json();
    for (const auto& ch : v.at("channels").as_array())
      if (ch.at("connector_channel_id") == json::value(channel)) return ch.as_object();
    return {};
  }
  std::vector<json::object> changes() {
    auto v = http_get(server.port(), "/connectors/lifecycle/events?limit=1000", server.key()).json();
    std::vector<json::object> out;
    for (const auto& e : v.at("events").as_array())
      if (e.at("event_type") == "ChannelStatusChanged" && e.at("session_id") == json::value(channel)) out.push_back(e.as_object());
    return out;
  }
  json::object descriptor() {
    auto d = dp->get_descriptor(channel);
    return d ? descriptor_in(*d) : json::object{};
  }

  server_fixture server{{"lifecycle.so"}};
  std::unique_ptr<dp_client> dp;
  std::string channel;
};

TEST_F(status_reason, a_reason_reaches_events_and_the_admin_list_but_never_the_descriptor) {
  ASSERT_TRUE(report({{"status", "degraded"}, {"reason", "target_unreachable"}}));
  ASSERT_TRUE(wait_until([&] { return text_of(listed(), "status") == "degraded"; }, 5s)) << json::serialize(listed());
  EXPECT_EQ(text_of(listed(), "status_reason"), "target_unreachable");
  auto all = changes();
  ASSERT_FALSE(all.empty());
  auto last = all.back().at("payload").as_object();
  EXPECT_EQ(text_of(last, "status"), "degraded");
  EXPECT_EQ(text_of(last, "reason"), "plugin_report") << "the host's own cause keeps its field";
  EXPECT_EQ(text_of(last, "status_reason"), "target_unreachable");
  auto d = descriptor();
  EXPECT_EQ(text_of(d["connection"].as_object(), "status"), "degraded");
  EXPECT_EQ(json::serialize(d).find("target_unreachable"), std::string::npos) << json::serialize(d);

  // connected clears it, in the list and the next record.
  ASSERT_TRUE(report({{"status", "connected"}}));
  ASSERT_TRUE(wait_until([&] { return text_of(listed(), "status") == "connected"; }, 5s));
  EXPECT_FALSE(listed().contains("status_reason")) << json::serialize(listed());
  EXPECT_FALSE(changes().back().at("payload").as_object().contains("status_reason"));
}

TEST_F(status_reason, a_report_without_a_reason_is_taken_as_before_and_a_malformed_one_is_refused) {
  ASSERT_TRUE(report({{"status", "degraded"}}));
  ASSERT_TRUE(wait_until([&] { return text_of(listed(), "status") == "degraded"; }, 5s));
  EXPECT_FALSE(listed().contains("status_reason"));
  EXPECT_FALSE(changes().back().at("payload").as_object().contains("status_reason"));
  for (const char* bad : {"Target_Unreachable", "target-unreachable", "x y"}) {
    EXPECT_FALSE(report({{"status", "offline"}, {"reason", bad}})) << bad;
  }
  EXPECT_FALSE(report({{"status", "offline"}, {"reason", std::string(65, 'a')}}));
  EXPECT_TRUE(report({{"status", "offline"}, {"reason", std::string(64, 'a')}}));
}

}  // namespace status_reason_cases
}  // namespace xconn::test
