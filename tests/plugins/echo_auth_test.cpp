// echo's sign-in state machine on a hand-driven clock: every expiry boundary is exact, no test sleeps.
#include "plugins/echo/echo_auth.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using echo::auth_answer;
using echo::auth_binding;
using echo::auth_flows;
using echo::auth_outcome;

constexpr std::int64_t t0 = 1790000000000;  // unix ms

class EchoAuth : public ::testing::Test {
 protected:
  EchoAuth() : flows_([this] { return now_; }, [this] { return "tok" + std::to_string(++issued_); }) {}

  auth_outcome token(std::string_view input_json, std::string_view channel = "cch_a") {
    return flows_.start(channel, "echo_token", "auth_t", input_json);
  }
  auth_outcome qr_start(std::string_view session = "auth_q", std::string_view channel = "cch_a") {
    return flows_.start(channel, "echo_qr_login", session, "{}");
  }
  auth_outcome poll(std::string_view session = "auth_q", bool refresh = false, std::string_view channel = "cch_a") {
    return flows_.status(channel, "echo_qr_login", session, refresh);
  }

  std::int64_t now_ = t0;
  int issued_ = 0;
  auth_flows flows_;
  bool keyed_ = (flows_.set_identity_key("store-secret"), true);  // hints the same in every test
};

// By value: the outcome is usually a temporary.
auth_answer answer_of(const auth_outcome& outcome) {
  const auto* answer = std::get_if<auth_answer>(&outcome);
  EXPECT_NE(answer, nullptr) << "expected an answer, got error " << std::get<xconn::sdk::error>(outcome).code;
  return answer ? *answer : auth_answer{"<an error>", "", {}, {}, "", {}};
}

xconn::sdk::error error_of(const auth_outcome& outcome) {
  const auto* error = std::get_if<xconn::sdk::error>(&outcome);
  EXPECT_NE(error, nullptr) << "expected an error, got status " << std::get<auth_answer>(outcome).status;
  return error ? *error : xconn::sdk::error{"<an answer>", "", false};
}

// What the host would see: the answer's JSON, or the error's.
std::string wire(const auth_outcome& outcome) {
  if (const auto* error = std::get_if<xconn::sdk::error>(&outcome)) return error->to_json();
  return std::get<auth_answer>(outcome).to_json();
}

// ---- echo_token ----

TEST_F(EchoAuth, HintIsAnHmacOfTheTokenKeyedByTheStoresSecretNeverABareHash) {
  // FIPS 180-2's and RFC 4231's test vectors.
  EXPECT_EQ(echo::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(echo::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const std::string hint = "echo-" + echo::hmac_sha256_hex("store-secret", "hint\nabc").substr(0, 6);
  EXPECT_EQ(echo::token_account_hint("store-secret", "abc"), hint);
  EXPECT_NE(echo::token_account_hint("another-secret", "abc"), hint) << "another store, another hint";
  EXPECT_NE(hint, "echo-ba7816") << "not the bare sha256 anyone could check a guess against";
  EXPECT_NE(echo::token_consumer_key("store-secret", "abc").substr(6, 6), hint.substr(5))
      << "the consumer key is another digest";

  auth_answer answer = answer_of(token(R"({"token":"abc"})"));
  EXPECT_EQ(answer.status, "authenticated");
  EXPECT_EQ(answer.binding, (auth_binding{"Echo user", hint}));
  EXPECT_EQ(json::parse(answer.to_json()).at("binding"),
            json::parse(R"({"display_name":"Echo user","account_hint":")" + hint + R"("})"));
  EXPECT_EQ(flows_.login_of("cch_a"), (auth_binding{"Echo user", hint}));
  EXPECT_EQ(flows_.login_of("cch_b"), std::nullopt);
  EXPECT_EQ(flows_.qr_session_count(), 0u) << "a form sign-in keeps no session";
}

TEST_F(EchoAuth, TheTokenInvalidIsRefused) {
  xconn::sdk::error error = error_of(token(R"({"token":"invalid"})"));
  EXPECT_EQ(error.code, "invalid_credentials");
  EXPECT_FALSE(error.retryable);
  EXPECT_FALSE(error.message.empty());
  EXPECT_EQ(error.message.find("invalid"), std::string::npos) << "the message repeats the token";
  EXPECT_EQ(flows_.login_of("cch_a"), std::nullopt);
}

TEST_F(EchoAuth, ARefusedTokenKeepsAnEarlierLogin) {
  answer_of(token(R"({"token":"abc"})"));
  error_of(token(R"({"token":"invalid"})"));
  EXPECT_EQ(flows_.login_of("cch_a")->account_hint, echo::token_account_hint("store-secret", "abc"));
}

TEST_F(EchoAuth, MissingOrEmptyTokenIsInvalidInput) {
  for (const char* input : {"{}", R"({"token":""})", R"({"token":5})", "[]", "not json", ""}) {
    EXPECT_EQ(error_of(token(input)).code, "invalid_input") << input;
  }
  EXPECT_EQ(flows_.login_of("cch_a"), std::nullopt);
}

TEST_F(EchoAuth, TheSecretNeverLeavesInAnAnswerOrError) {
  for (std::string secret : {"planted-secret-4711", "invalid", "abc", "tok1", "echo-qr:tok1"}) {
    std::string input = json::serialize(json::object{{"token", secret}});
    auth_outcome outcome = token(input);
    if (const auto* error = std::get_if<xconn::sdk::error>(&outcome)) {
      EXPECT_EQ(error->message.find(secret), std::string::npos) << secret;
    } else {
      EXPECT_EQ(wire(outcome).find(secret), std::string::npos) << secret << " in " << wire(outcome);
    }
  }
}

TEST_F(EchoAuth, UnknownFlowIsNotFound) {
  EXPECT_EQ(error_of(flows_.start("cch_a", "echo_oauth", "auth_x", "{}")).code, "auth_flow_not_found");
}

// ---- echo_qr_login ----

TEST_F(EchoAuth, QrStartIsPendingWithAFreshCode) {
  auth_answer answer = answer_of(qr_start());
  EXPECT_EQ(answer.status, "pending");
  EXPECT_EQ(answer.qr_code_text, "echo-qr:tok1");
  EXPECT_EQ(answer.expires_at, t0 + 120000);
  EXPECT_EQ(answer.poll_interval_millis, 1000);
  EXPECT_FALSE(answer.message.empty());
  EXPECT_EQ(answer.binding, std::nullopt);
  EXPECT_EQ(json::parse(answer.to_json()), json::parse(R"({"status":"pending","qr_code_text":"echo-qr:tok1",
      "expires_at":1790000120000,"poll_interval_millis":1000,"message":")" + answer.message + "\"}"));

  EXPECT_EQ(answer_of(qr_start("auth_q2")).qr_code_text, "echo-qr:tok2") << "every session gets its own code";
}

TEST_F(EchoAuth, QrScannedThenAuthenticated) {
  qr_start();
  now_ += 1000;
  auth_answer scanned = answer_of(poll());
  EXPECT_EQ(scanned.status, "scanned");
  EXPECT_EQ(scanned.binding, std::nullopt);
  EXPECT_EQ(flows_.login_of("cch_a"), std::nullopt);

  now_ += 1000;
  auth_answer done = answer_of(poll());
  EXPECT_EQ(done.status, "authenticated");
  EXPECT_EQ(done.binding, (auth_binding{"Echo user", "echo-qr"}));
  EXPECT_EQ(flows_.login_of("cch_a"), (auth_binding{"Echo user", "echo-qr"}));

  // A repeated poll, even past the code's expiry, still says authenticated; a refresh does not undo it.
  now_ = t0 + 500000;
  EXPECT_EQ(answer_of(poll()).status, "authenticated");
  EXPECT_EQ(answer_of(poll("auth_q", true)).status, "authenticated");
}

TEST_F(EchoAuth, QrExpiresAtExactly120Seconds) {
  qr_start("auth_1");
  qr_start("auth_2");
  qr_start("auth_3");
  now_ = t0 + 119999;
  EXPECT_EQ(answer_of(poll("auth_1")).status, "scanned");
  EXPECT_EQ(answer_of(poll("auth_2")).status, "scanned");
  EXPECT_EQ(answer_of(poll("auth_2")).status, "authenticated");

  now_ = t0 + 120000;
  auth_answer expired = answer_of(poll("auth_1"));
  EXPECT_EQ(expired.status, "qr_refresh_required") << "scanned but not confirmed in time";
  EXPECT_EQ(expired.qr_code_text, "") << "an expired code is not shown again";
  EXPECT_EQ(expired.binding, std::nullopt);
  EXPECT_EQ(answer_of(poll("auth_3")).status, "qr_refresh_required") << "never scanned";
  EXPECT_EQ(answer_of(poll("auth_3")).status, "qr_refresh_required") << "polling does not revive it";
  EXPECT_EQ(flows_.login_of("cch_a"), (auth_binding{"Echo user", "echo-qr"})) << "from auth_2";
}

TEST_F(EchoAuth, RefreshAfterExpiryIssuesANewCode) {
  qr_start();
  now_ = t0 + 200000;
  EXPECT_EQ(answer_of(poll()).status, "qr_refresh_required");

  auth_answer fresh = answer_of(poll("auth_q", true));
  EXPECT_EQ(fresh.status, "pending");
  EXPECT_EQ(fresh.qr_code_text, "echo-qr:tok2");
  EXPECT_EQ(fresh.expires_at, t0 + 200000 + 120000);
  EXPECT_EQ(fresh.poll_interval_millis, 1000);

  EXPECT_EQ(answer_of(poll()).status, "scanned") << "the scan count starts over";
  EXPECT_EQ(answer_of(poll()).status, "authenticated");
}

TEST_F(EchoAuth, RefreshBeforeExpiryResetsTheScan) {
  qr_start();
  EXPECT_EQ(answer_of(poll()).status, "scanned");
  now_ += 5000;
  auth_answer fresh = answer_of(poll("auth_q", true));
  EXPECT_EQ(fresh.status, "pending");
  EXPECT_EQ(fresh.expires_at, t0 + 5000 + 120000);
  EXPECT_EQ(answer_of(poll()).status, "scanned");
  now_ = t0 + 5000 + 119999;
  EXPECT_EQ(answer_of(poll()).status, "authenticated") << "the new code's lifetime counts";
}

TEST_F(EchoAuth, UnknownSessionIsNotFound) {
  qr_start();
  EXPECT_EQ(error_of(poll("auth_nope")).code, "auth_session_not_found");
  EXPECT_EQ(error_of(poll("auth_q", false, "cch_b")).code, "auth_session_not_found") << "another channel's session";
  EXPECT_EQ(error_of(flows_.status("cch_a", "echo_token", "auth_q", false)).code, "auth_session_not_found");
  EXPECT_EQ(error_of(flows_.status("cch_a", "echo_token", "auth_t", false)).code, "auth_session_not_found");
  EXPECT_EQ(answer_of(poll()).status, "scanned") << "the failed lookups did not touch it";
}

TEST_F(EchoAuth, CancelDropsTheSessionOnly) {
  answer_of(token(R"({"token":"abc"})"));
  qr_start();
  flows_.cancel("cch_b", "auth_q");  // not that channel's: ignored
  EXPECT_EQ(flows_.qr_session_count(), 1u);
  flows_.cancel("cch_a", "auth_q");
  EXPECT_EQ(flows_.qr_session_count(), 0u);
  EXPECT_EQ(error_of(poll()).code, "auth_session_not_found");
  EXPECT_EQ(flows_.login_of("cch_a")->account_hint, echo::token_account_hint("store-secret", "abc")) << "cancel never signs out";
  flows_.cancel("cch_a", "auth_q");  // again: nothing happens
}

TEST_F(EchoAuth, LogoutClearsTheLoginAndRunningSessions) {
  answer_of(token(R"({"token":"abc"})", "cch_a"));
  answer_of(token(R"({"token":"abc"})", "cch_b"));
  qr_start("auth_a", "cch_a");
  qr_start("auth_b", "cch_b");

  flows_.logout("cch_a");
  EXPECT_EQ(flows_.login_of("cch_a"), std::nullopt);
  EXPECT_EQ(error_of(poll("auth_a", false, "cch_a")).code, "auth_session_not_found");
  EXPECT_EQ(flows_.login_of("cch_b")->account_hint, echo::token_account_hint("store-secret", "abc"))
      << "another channel keeps its login";
  EXPECT_EQ(answer_of(poll("auth_b", false, "cch_b")).status, "scanned");

  flows_.logout("cch_a");  // idempotent
  flows_.logout("cch_never");
  EXPECT_EQ(flows_.login_of("cch_a"), std::nullopt);
}

TEST_F(EchoAuth, AbandonedSessionsAreForgottenAfterRetention) {
  qr_start("auth_old");
  now_ = t0 + 120000 + 600000 - 1;
  qr_start("auth_new");
  EXPECT_EQ(flows_.qr_session_count(), 2u);
  now_ = t0 + 120000 + 600000;
  qr_start("auth_newer");
  EXPECT_EQ(flows_.qr_session_count(), 2u);
  EXPECT_EQ(error_of(poll("auth_old")).code, "auth_session_not_found");
}

TEST_F(EchoAuth, SessionCountIsBounded) {
  for (std::size_t i = 0; i < echo::max_qr_sessions; ++i) answer_of(qr_start("auth_" + std::to_string(i)));
  xconn::sdk::error error = error_of(qr_start("auth_one_more"));
  EXPECT_EQ(error.code, "too_many_auth_sessions");
  EXPECT_TRUE(error.retryable);
  EXPECT_EQ(answer_of(qr_start("auth_0")).status, "pending") << "restarting a known session is no new one";
}

TEST_F(EchoAuth, ChannelsSignInConcurrently) {
  auth_flows flows([] { return t0; }, [] { return std::string("tok"); });
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&flows, t] {
      for (int i = 0; i < 200; ++i) {
        std::string channel = "cch_" + std::to_string(t) + "_" + std::to_string(i);
        std::string session = "auth_" + channel;
        flows.start(channel, "echo_token", session, R"({"token":"abc"})");
        flows.start(channel, "echo_qr_login", session, "{}");
        flows.status(channel, "echo_qr_login", session, false);
        flows.status(channel, "echo_qr_login", session, false);
        if (i % 2) flows.logout(channel);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 200; ++i) {
      std::string channel = "cch_" + std::to_string(t) + "_" + std::to_string(i);
      EXPECT_EQ(flows.login_of(channel).has_value(), i % 2 == 0) << channel;
    }
  }
  EXPECT_EQ(flows.qr_session_count(), 8u * 100u);
}

}  // namespace
