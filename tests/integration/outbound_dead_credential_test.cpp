// A reply (IM v2 final) is handed to the plugin only while the channel's credential may be used, as its tools are:
// on an expired or revoked channel it is refused connection_not_authenticated and not retryable, on an offline or
// error one connector_channel_unavailable and retryable, and nothing reaches the target; a degraded channel still
// sends. Live deltas and typing are not shown through a dead credential either.
//
// The fixture plugin relay (tests/plugins/fixtures/relay.cpp) reports any status it is given (relay_report) and
// records every send, update and activity that reached it (relay_log, readable once the channel signs in again).
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

class outbound_dead_credential : public ::testing::Test {
 protected:
  outbound_dead_credential() : server({"relay.so"}) {}
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "relay");
    ASSERT_TRUE(dp);
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  bool sign_in(const std::string& channel) {
    auto ack = dp->auth_start(channel, "relay_token", json::object{{"token", "tok-relay-1"}});
    return ack && text_of(payload_of(*ack), "status") == "authenticated";
  }
  void report(const std::string& channel, const std::string& status) {
    auto ack = dp->invoke(channel, "relay_report", {{"report", R"({"status":")" + status + R"("})"}});
    ASSERT_TRUE(ack);
    ASSERT_EQ(payload_of(*ack).at("result").at("taken"), true) << json::serialize(*ack);
  }
  json::object final_text(const std::string& channel, const std::string& message_id) {
    auto answer = dp->request("chat.message", {{"message_id", message_id}, {"text", "hello"}}, channel);
    return answer ? payload_of(*answer) : json::object{};
  }
  json::object relay_log(const std::string& channel) {
    auto ack = dp->invoke(channel, "relay_log", {});
    EXPECT_TRUE(ack && error_code(*ack).empty()) << (ack ? json::serialize(*ack) : "no answer");
    return ack ? payload_of(*ack).at("result").as_object() : json::object{};
  }

  server_fixture server;
  std::unique_ptr<dp_client> dp;
};

TEST_F(outbound_dead_credential, replies_follow_the_channels_credential_as_its_tools_do) {
  struct expectation {
    std::string status, code;
    bool retryable;
  };
  const std::vector<expectation> cases = {{"revoked", "connection_not_authenticated", false},
                                          {"expired", "connection_not_authenticated", false},
                                          {"offline", "connector_channel_unavailable", true},
                                          {"error", "connector_channel_unavailable", true}};
  for (const auto& e : cases) {
    SCOPED_TRACE(e.status);
    auto channel = dp->open();
    ASSERT_TRUE(sign_in(channel));
    report(channel, e.status);
    auto ack = final_text(channel, "m-" + e.status);
    EXPECT_EQ(text_of(ack, "status"), "rejected") << json::serialize(ack);
    EXPECT_EQ(text_of(ack, "code"), e.code) << json::serialize(ack);
    EXPECT_EQ(ack.if_contains("retryable") ? ack.at("retryable") : json::value(), json::value(e.retryable))
        << json::serialize(ack);
    auto tool = dp->invoke(channel, "relay_log", {});
    ASSERT_TRUE(tool);
    EXPECT_FALSE(error_code(*tool).empty()) << "its tools are refused too: " << json::serialize(*tool);
    ASSERT_TRUE(sign_in(channel));  // a new sign-in: the channel's tools read again what reached the target
    EXPECT_TRUE(relay_log(channel).at("sends").as_array().empty()) << "a reply went out on a dead credential";
    // A retryable refusal's retry goes through once the channel works again, and is sent once.
    if (e.retryable) {
      EXPECT_EQ(text_of(final_text(channel, "m-" + e.status), "status"), "accepted");
      EXPECT_EQ(relay_log(channel).at("sends").as_array().size(), 1u);
    }
  }
}

TEST_F(outbound_dead_credential, a_degraded_channel_still_sends) {
  auto channel = dp->open();
  ASSERT_TRUE(sign_in(channel));
  report(channel, "degraded");
  EXPECT_EQ(text_of(final_text(channel, "m-degraded"), "status"), "accepted");
  EXPECT_EQ(relay_log(channel).at("sends").as_array().size(), 1u);
}

TEST_F(outbound_dead_credential, no_live_delta_or_typing_goes_through_a_revoked_credential) {
  auto channel = dp->open();
  ASSERT_TRUE(sign_in(channel));
  report(channel, "revoked");
  dp->send("chat.activity", {{"status", "thinking"}}, channel);
  dp->send("chat.message.delta", {{"message_id", "d-1"}, {"sequence", 1}, {"text", "partial"}}, channel);
  auto pong = dp->request("ping");  // every packet before it has been handled
  ASSERT_TRUE(pong);
  ASSERT_TRUE(sign_in(channel));
  auto log = relay_log(channel);
  EXPECT_TRUE(log.at("updates").as_array().empty()) << json::serialize(log);
  EXPECT_TRUE(log.at("activities").as_array().empty()) << json::serialize(log);
}

}  // namespace
}  // namespace xconn::test
