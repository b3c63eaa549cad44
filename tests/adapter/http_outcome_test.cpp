// The one reading of a target's HTTP answer (plugin-api/xconn/adapter/http_outcome.hpp).
#include <xconn/adapter/http_outcome.hpp>

#include <gtest/gtest.h>

using namespace std::chrono_literals;
namespace ad = xconn::adapter;
using kind = ad::http_outcome::kind;

namespace http_outcome_cases {

const ad::outcome_rules telegram_like{{{401, "connection_not_authenticated"}, {403, "chat_forbidden"}}, "send_failed"};

TEST(http_outcome, two_hundreds_are_ok) {
  for (int status : {200, 201, 204}) {
    auto o = ad::outcome_of(status, -1, true, telegram_like);
    EXPECT_TRUE(o.ok()) << status;
    EXPECT_EQ(o.code, "");
    EXPECT_FALSE(o.retryable);
  }
}

TEST(http_outcome, declared_statuses_are_refusals_with_their_code) {
  auto o = ad::outcome_of(403, -1, true, telegram_like);
  EXPECT_EQ(o.what, kind::refused);
  EXPECT_EQ(o.code, "chat_forbidden");
  EXPECT_FALSE(o.retryable);
  // A refusal is a refusal even when its body is not what the target usually says.
  EXPECT_EQ(ad::outcome_of(401, -1, false, telegram_like).code, "connection_not_authenticated");
  // Undeclared: the adapter's otherwise code.
  EXPECT_EQ(ad::outcome_of(404, -1, true, telegram_like).what, kind::rejected);
  EXPECT_EQ(ad::outcome_of(404, -1, true, telegram_like).code, "send_failed");
  EXPECT_EQ(ad::outcome_of(404, -1, true, {}).code, "target_rejected");
}

TEST(http_outcome, a_429_waits_at_least_a_second) {
  auto o = ad::outcome_of(429, 12, true, {});
  EXPECT_EQ(o.what, kind::rate_limited);
  EXPECT_EQ(o.code, "rate_limited");
  EXPECT_EQ(o.wait, 12s);
  EXPECT_TRUE(o.retryable);
  EXPECT_EQ(ad::outcome_of(429, 0, true, {}).wait, 1s);
  EXPECT_EQ(ad::outcome_of(429, -1, false, {}).wait, 1s);
}

TEST(http_outcome, no_answer_a_5xx_and_a_garbled_answer_are_target_unreachable) {
  for (auto [status, understood] : {std::pair{0, true}, {500, true}, {502, true}, {503, false}, {200, false}, {400, false}}) {
    auto o = ad::outcome_of(status, 30, understood, telegram_like);
    EXPECT_EQ(o.what, kind::unreachable) << status;
    EXPECT_EQ(o.code, "target_unreachable") << status;
    EXPECT_TRUE(o.retryable) << status;
    EXPECT_EQ(o.wait, 0s) << status;
  }
}

}  // namespace http_outcome_cases
