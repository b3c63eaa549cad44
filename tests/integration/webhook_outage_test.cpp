// The webhook plugin under the adapters' shared outage rule, on the real server against the test receiver on
// loopback: a receiver answering 5xx turns the channel degraded at its first failed delivery, a HEAD probe checks it
// 1 s, 2 s, 4 s ... apart and turns the channel connected by itself (the seconds it took are printed); a receiver
// that refuses the channel's signature (401 or 403) turns the channel revoked, its finals and tool then
// connection_not_authenticated.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/webhook_receiver.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

namespace xconn::test {
namespace webhook_outage_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string secret = "planted-outage-secret-0b7f3c21";

class webhook_outage : public ::testing::Test {
 protected:
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "webhook");
    ASSERT_TRUE(dp);
    channel = dp->open_signed_in("webhook_binding", {{"outbound_url", receiver.url()}, {"secret", secret}});
    ASSERT_FALSE(channel.empty());
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }
  json::object reply(const std::string& message_id) {
    auto ack = dp->request("chat.message", {{"message_id", message_id}, {"text", "hello receiver"}}, channel, 20s);
    return ack ? payload_of(*ack) : json::object{};
  }
  std::string status_of() {
    auto d = dp->get_descriptor(channel);
    return d ? text_of(descriptor_in(*d)["connection"].as_object(), "status") : "";
  }

  webhook_receiver receiver{secret};
  server_fixture server{{"webhook.so"}};
  std::unique_ptr<dp_client> dp;
  std::string channel;
};

TEST_F(webhook_outage, a_receiver_answering_5xx_degrades_the_channel_at_once_and_probes_bring_it_back) {
  receiver.script({503, 502, 500});
  auto started = std::chrono::steady_clock::now();
  auto p = reply("down-1");
  EXPECT_EQ(text_of(p, "code"), "target_unreachable") << json::serialize(p);
  EXPECT_EQ(p["retryable"], true);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s) << "refused at its first failure, not after 25 s";
  ASSERT_TRUE(wait_until([&] { return status_of() == "degraded"; }, 5s)) << status_of();
  auto meanwhile = reply("down-2");
  EXPECT_EQ(text_of(meanwhile, "code"), "target_unreachable") << json::serialize(meanwhile);
  EXPECT_EQ(receiver.requests("POST").size(), 1u) << "a final while degraded was posted";

  ASSERT_TRUE(wait_until([&] { return status_of() == "connected"; }, 20s)) << status_of();
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("webhook outage: channel connected %.2f s after its first failed delivery (probes 1, 2, 4 s apart)\n",
              seconds);
  auto probes = receiver.requests("HEAD");
  ASSERT_EQ(probes.size(), 3u);
  EXPECT_GE(probes[1].at - probes[0].at, 1900ms);
  EXPECT_GE(probes[2].at - probes[1].at, 3900ms);
  for (const auto& probe : probes) EXPECT_TRUE(probe.signature_ok) << "the probe is signed as an empty body";
  EXPECT_EQ(text_of(reply("down-1"), "status"), "accepted");
}

class webhook_refusal : public webhook_outage, public ::testing::WithParamInterface<int> {};

TEST_P(webhook_refusal, a_receiver_refusing_the_signature_turns_the_channel_revoked) {
  receiver.script({GetParam()});
  auto p = reply("refused-1");
  EXPECT_EQ(text_of(p, "code"), "connection_not_authenticated") << json::serialize(p);
  EXPECT_EQ(p["retryable"], false);
  ASSERT_TRUE(wait_until([&] { return status_of() == "revoked"; }, 5s)) << status_of();
  EXPECT_EQ(text_of(reply("refused-2"), "code"), "connection_not_authenticated");
  auto tool = dp->invoke(channel, "webhook_post", {{"text", "x"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "connection_not_authenticated") << json::serialize(*tool);
  EXPECT_EQ(receiver.requests("POST").size(), 1u);
  // A new sign-in binds it again.
  auto again =
      dp->auth_start(channel, "webhook_binding", json::object{{"outbound_url", receiver.url()}, {"secret", secret}});
  ASSERT_TRUE(again);
  EXPECT_EQ(error_code(*again), "") << json::serialize(*again);
  EXPECT_TRUE(wait_until([&] { return status_of() == "connected"; }, 10s)) << status_of();
  EXPECT_EQ(text_of(reply("refused-3"), "status"), "accepted");
}

TEST_P(webhook_refusal, the_tool_meeting_a_refused_signature_turns_the_channel_revoked) {
  receiver.script({GetParam()});
  auto tool = dp->invoke(channel, "webhook_post", {{"text", "x"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "connection_not_authenticated") << json::serialize(*tool);
  EXPECT_TRUE(wait_until([&] { return status_of() == "revoked"; }, 5s)) << status_of();
}

INSTANTIATE_TEST_SUITE_P(statuses, webhook_refusal, ::testing::Values(401, 403));

}  // namespace webhook_outage_cases
}  // namespace xconn::test
