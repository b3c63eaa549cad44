// The telegram plugin while the Bot API is down (adapters' shared rules: a target that answers 5xx, 429 or nothing
// is never a wrong credential or a wrong chat), on the real server against the fake Bot API on loopback:
// - a sign-in meeting an outage answers target_unreachable (or rate_limited with Telegram's wait), and signs in once
//   Telegram answers again; only Telegram's own refusals are invalid_credentials / chat_not_found;
// - a restart during an outage (no answer, or 5xx) shows the channel degraded, the plugin degraded with
//   target_unreachable, refuses replies and tools retryable, checks again 1 s, 2 s, 4 s ... apart, and turns the
//   channel connected by itself once Telegram answers (the time it takes is printed); a token Telegram refuses by
//   then turns it revoked.
#include "support/data_plane.hpp"
#include "support/fake_telegram.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace xconn::test {
namespace telegram_outage_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string token = "424242:AAH-planted-outage-token-51ab";
constexpr long long bot_id = 424242;
constexpr long long group_id = -1004242424242;

class telegram_outage : public ::testing::Test {
 protected:
  telegram_outage()
      : server({"telegram.so"}, [this](config& c) {
          c.connectors["telegram"].config = {{"api_base_url", api.base_url()}, {"poll_timeout_s", 1}};
        }) {
    api.add_bot(token, bot_id, "outage_bot");
    api.add_chat(group_id, "supergroup", "Outage room");
  }
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "telegram");
    ASSERT_TRUE(dp);
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  // auth.start's error code ("" when authenticated) and message.
  std::pair<std::string, std::string> sign_in() {
    auto ack = dp->auth_start(dp->open(), "telegram_bot_binding",
                              json::object{{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
    if (!ack) return {"no answer", ""};
    auto error = ack->if_contains("error");
    return {error_code(*ack), error && error->is_object() ? text_of(error->as_object(), "message") : ""};
  }

  // Stops the server, lets `outage` happen to the Bot API, and starts it again with the same store: the channel
  // is restored while Telegram is down.
  template <class Outage>
  void restart_during(Outage outage) {
    auto connector_id = dp->connector_id();
    dp.reset();
    server.stop();
    outage();
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "telegram", {{"connector_id", connector_id}});
    ASSERT_TRUE(dp);
  }

  std::string status_of(const std::string& channel) {
    auto d = dp->get_descriptor(channel);
    return d ? text_of(descriptor_in(*d)["connection"].as_object(), "status") : "";
  }
  // The reason the admin list gives for the channel's status (GET {base}/channels).
  std::string status_reason_of(const std::string& channel) {
    auto v = http_get(server.port(), "/connectors/telegram/channels", server.key()).json();
    for (const auto& ch : v.at("channels").as_array())
      if (ch.at("connector_channel_id") == json::value(channel)) return text_of(ch.as_object(), "status_reason");
    return "";
  }
  json::object adapter_health() {
    auto h = http_get(server.port(), "/connectors/telegram/health", server.key()).json();
    return h.is_object() ? h.at("adapter").as_object() : json::object{};
  }

  fake_telegram api;
  server_fixture server;
  std::unique_ptr<dp_client> dp;
};

TEST_F(telegram_outage, a_sign_in_during_an_outage_is_retryable_and_never_a_wrong_token_or_chat) {
  api.add_fault("getMe", 500, "Internal Server Error");
  EXPECT_EQ(sign_in().first, "target_unreachable");
  api.add_fault("getMe", 502, "Bad Gateway");
  EXPECT_EQ(sign_in().first, "target_unreachable");
  api.add_fault("getMe", 0, "", 2);  // no answer, on the kept connection and on a new one
  EXPECT_EQ(sign_in().first, "target_unreachable");
  api.clear_faults();
  api.add_fault("getMe", 429, "Too Many Requests: retry after 1", 1, 1);
  auto limited = sign_in();
  EXPECT_EQ(limited.first, "rate_limited");
  EXPECT_NE(limited.second.find("wait 1 s"), std::string::npos) << limited.second;

  api.add_fault("getChat", 500, "Internal Server Error");
  EXPECT_EQ(sign_in().first, "target_unreachable");
  api.add_fault("getChat", 0, "", 2);
  EXPECT_EQ(sign_in().first, "target_unreachable");
  api.clear_faults();
  api.add_fault("getChat", 429, "Too Many Requests: retry after 1", 1, 1);
  EXPECT_EQ(sign_in().first, "rate_limited");

  // Telegram answers again: the same sign-in goes through. Its own refusals keep their codes.
  EXPECT_EQ(sign_in().first, "");
  api.add_fault("getMe", 401, "Unauthorized");
  EXPECT_EQ(sign_in().first, "invalid_credentials");
  api.add_fault("getChat", 400, "Bad Request: chat not found");
  EXPECT_EQ(sign_in().first, "chat_not_found");
  api.add_fault("getChat", 403, "Forbidden: bot is not a member of the supergroup chat");
  EXPECT_EQ(sign_in().first, "chat_not_found");
}

// status 0: no answer at all; 500: the Bot API answers, with an error.
class telegram_outage_restart : public telegram_outage, public ::testing::WithParamInterface<int> {};

TEST_P(telegram_outage_restart, a_channel_restored_during_an_outage_is_degraded_then_connected_by_itself) {
  const int outage_status = GetParam();
  auto channel = dp->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
  ASSERT_FALSE(channel.empty());
  const auto before = api.call_times("getMe").size();  // the sign-in's
  restart_during([&] { api.add_fault("*", outage_status, "Internal Server Error", 100000); });
  ASSERT_TRUE(dp->open_channel(channel));

  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  EXPECT_TRUE(wait_until([&] { return text_of(adapter_health(), "last_error_code") == "target_unreachable"; }, 5s))
      << json::serialize(adapter_health());
  EXPECT_EQ(text_of(adapter_health(), "health"), "degraded");

  // Replies and tools meanwhile: refused, retryable (never connection_not_authenticated).
  auto ack = dp->request("chat.message", {{"message_id", "during-outage"}, {"text", "anyone there?"}}, channel, 10s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "rejected") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "target_unreachable") << json::serialize(*ack);
  EXPECT_EQ(payload_of(*ack).at("retryable"), true) << json::serialize(*ack);
  auto tool = dp->invoke(channel, "telegram_message_send", {{"text", "x"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "target_unreachable") << json::serialize(*tool);

  // The restore's check, then again 1 s later, then 2 s after that.
  ASSERT_TRUE(wait_until([&] { return api.call_times("getMe").size() >= before + 3; }, 10s));
  auto times = api.call_times("getMe");
  auto first_gap = times[before + 1] - times[before], second_gap = times[before + 2] - times[before + 1];
  EXPECT_GE(first_gap, 0.9);
  EXPECT_LT(first_gap, 1.9);
  EXPECT_GE(second_gap, 1.9);
  EXPECT_LT(second_gap, 3.9);  // under 4 s: doubled once, not twice (a sanitizer build answers slower)
  EXPECT_EQ(status_of(channel), "degraded");
  EXPECT_EQ(status_reason_of(channel), "target_unreachable");

  // Telegram is back: the channel turns connected by itself, and messages flow.
  api.clear_faults();
  auto back = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 15s)) << status_of(channel);
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - back).count();
  std::printf("[ telegram ] Bot API back (outage: %s) -> channel connected in %.2f s\n",
              outage_status == 0 ? "no answer" : "HTTP 500", seconds);
  RecordProperty("seconds_to_connected", std::to_string(seconds));
  EXPECT_EQ(text_of(adapter_health(), "health"), "healthy") << json::serialize(adapter_health());
  api.add_update(token, telegram_text(group_id, "supergroup", 9, 555, "Bo", "after the outage"));
  auto m = dp->next_push("chat.message", channel, 10s);
  ASSERT_TRUE(m) << "nothing polls Telegram after the outage";
  EXPECT_EQ(text_of(payload_of(*m), "text"), "after the outage");
  auto sent = dp->request("chat.message", {{"message_id", "after-outage"}, {"text", "back"}}, channel, 10s);
  ASSERT_TRUE(sent);
  EXPECT_EQ(text_of(payload_of(*sent), "status"), "accepted") << json::serialize(*sent);
}

INSTANTIATE_TEST_SUITE_P(no_answer_and_5xx, telegram_outage_restart, ::testing::Values(0, 500));

TEST_F(telegram_outage, a_token_refused_once_telegram_answers_again_turns_the_restored_channel_revoked) {
  auto channel = dp->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
  ASSERT_FALSE(channel.empty());
  restart_during([&] { api.add_fault("*", 0, "", 100000); });
  ASSERT_TRUE(dp->open_channel(channel));
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  api.clear_faults();
  api.add_fault("getMe", 401, "Unauthorized", 100000);
  EXPECT_EQ(last_pushed_status(*dp, channel, "revoked", 10s), "revoked");
  EXPECT_TRUE(wait_until([&] { return text_of(adapter_health(), "health") == "healthy"; }, 5s))
      << json::serialize(adapter_health());
  auto tool = dp->invoke(channel, "telegram_message_send", {{"text", "x"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "connection_not_authenticated");
}

TEST_F(telegram_outage, a_chat_telegram_no_longer_shows_turns_the_restored_channel_revoked_at_once) {
  auto channel = dp->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
  ASSERT_FALSE(channel.empty());
  restart_during([&] { api.add_fault("getChat", 400, "Bad Request: chat not found", 100000); });
  ASSERT_TRUE(dp->open_channel(channel));
  EXPECT_TRUE(wait_until([&] { return status_of(channel) == "revoked"; }, 10s)) << status_of(channel);
}

}  // namespace telegram_outage_cases
}  // namespace xconn::test
