// echo's shared consumers through the C ABI alone (docs/adapters.md "echo": "Channels with the same token share one
// shared consumer"): a token sign-in acquires "token-" + 16 hex of an HMAC of the token keyed by the secret echo
// keeps in its key-value store (seeded here), a new sign-in or a logout
// releases it, the consumer starts with the first reference and stops when the host says so. The test host counts
// references per (channel, key) as the host's registry does; the test plays the host's part of calling
// on_consumer_stop.
#include "plugins/echo/sha256_hex.hpp"
#include "support/abi_test_host.hpp"
#include "support/test_support.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace {

using xconn::test::c_str;
using xconn::test::consumer_call;
using xconn::test::test_call;

const std::string identity_key = "consumer-test-identity-key-0123456789";
std::string key_of(std::string_view token) { return echo::token_consumer_key(identity_key, token); }

class EchoConsumers : public xconn::test::plugin_test {
 protected:
  void SetUp() override {
    host_.set_kv("identity_key", identity_key);  // what echo made on its first start
    load(xconn::test::plugin_dir() / "echo.so");
    if (HasFatalFailure()) return;
    test_call& start = start_call();
    ASSERT_TRUE(host_.wait(start));
    ASSERT_EQ(start.status, XCONN_STATUS_OK) << start.json;
  }

  test_call& sign_in(std::string_view channel, std::string_view token) {
    test_call& call = host_.new_call();
    std::string input = R"({"token":")" + std::string(token) + "\"}";
    api_->xconn_plugin_on_auth_start(instance_, call.c_call(), c_str(channel), c_str("echo_token"), c_str("auth_t"),
                                     c_str(input));
    EXPECT_TRUE(host_.wait(call)) << "auth_start never answered";
    return call;
  }

  void signed_in(std::string_view channel, std::string_view token) {
    test_call& call = sign_in(channel, token);
    ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
    EXPECT_EQ(call.result().at("status").as_string(), "authenticated") << call.json;
  }

  // A QR sign-in of the channel, polled to authenticated.
  void qr_signed_in(std::string_view channel, std::string_view session) {
    test_call& start = host_.new_call();
    api_->xconn_plugin_on_auth_start(instance_, start.c_call(), c_str(channel), c_str("echo_qr_login"),
                                     c_str(session), c_str("{}"));
    ASSERT_TRUE(host_.wait(start));
    for (const char* expected : {"scanned", "authenticated"}) {
      test_call& poll = host_.new_call();
      api_->xconn_plugin_on_auth_status(instance_, poll.c_call(), c_str(channel), c_str("echo_qr_login"),
                                        c_str(session), 0);
      ASSERT_TRUE(host_.wait(poll));
      ASSERT_EQ(poll.status, XCONN_STATUS_OK) << poll.json;
      EXPECT_EQ(poll.result().at("status").as_string(), expected) << poll.json;
    }
  }

  void logout(std::string_view channel) {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_auth_logout(instance_, call.c_call(), c_str(channel));
    ASSERT_TRUE(host_.wait(call)) << "auth_logout never answered";
    EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  }

  void stopped_ok(std::string_view key) {
    test_call& call = consumer_stop(key);
    EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
    EXPECT_EQ(call.json, "{}");
  }

  std::size_t logged(std::string_view line) {
    auto lines = host_.log_lines();
    return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), line));
  }

  static consumer_call acquired(std::string channel, std::string key, int answer) {
    return {true, std::move(channel), std::move(key), answer};
  }
  static consumer_call released(std::string channel, std::string key, int left) {
    return {false, std::move(channel), std::move(key), left};
  }

  void expect_calls(const std::vector<consumer_call>& expected) {
    auto got = host_.consumer_calls();
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].acquire, expected[i].acquire) << "call " << i;
      EXPECT_EQ(got[i].channel, expected[i].channel) << "call " << i;
      EXPECT_EQ(got[i].key, expected[i].key) << "call " << i;
      EXPECT_EQ(got[i].answer, expected[i].answer) << "call " << i;
    }
  }
};

TEST_F(EchoConsumers, TheKeyIsTokenAndSixteenHexOfAnHmacOfTheTokenNeverItsBareSha256) {
  signed_in("ch-1", "abc");
  auto expected = "token-" + echo::hmac_sha256_hex(identity_key, "consumer\nabc").substr(0, 16);
  expect_calls({acquired("ch-1", expected, 1)});
  EXPECT_NE(expected, "token-ba7816bf8f01cfea");  // sha256("abc") = ba7816bf8f01cfea...
}

// On its first start echo makes the key and keeps it: the same tokens give the same keys after a restart.
class EchoIdentityKey : public xconn::test::plugin_test {};

TEST_F(EchoIdentityKey, MadeOnTheFirstStartAndKeptInTheKeyValueStore) {
  EXPECT_TRUE(host_.kv().empty());
  load(xconn::test::plugin_dir() / "echo.so");
  test_call& start = start_call();
  ASSERT_TRUE(host_.wait(start));
  auto kv = host_.kv();
  ASSERT_TRUE(kv.contains("identity_key"));
  EXPECT_GE(kv["identity_key"].size(), 32u);
}

TEST_F(EchoConsumers, TwoChannelsWithTheSameTokenShareOneConsumer) {
  const std::string key = key_of("shared-token");
  signed_in("ch-1", "shared-token");
  signed_in("ch-2", "shared-token");
  expect_calls({acquired("ch-1", key, 1), acquired("ch-2", key, 2)});
  EXPECT_EQ(host_.consumer_references(key), 2u);
  EXPECT_EQ(logged("consumer " + key + " started (1 channel(s); start 1)"), 1u);
  EXPECT_EQ(logged("consumer " + key + " started (2 channel(s); start 2)"), 0u) << "the second channel shares it";
}

TEST_F(EchoConsumers, LogoutReleasesAndTheHostsStopEndsTheConsumer) {
  const std::string key = key_of("shared-token");
  signed_in("ch-1", "shared-token");
  signed_in("ch-2", "shared-token");
  logout("ch-1");
  expect_calls({acquired("ch-1", key, 1), acquired("ch-2", key, 2), released("ch-1", key, 1)});
  EXPECT_TRUE(host_.consumers_at_zero().empty());
  logout("ch-1");  // a repeat holds nothing to release
  EXPECT_EQ(host_.consumer_calls().size(), 3u);

  logout("ch-2");
  EXPECT_EQ(host_.consumer_calls().back().answer, 0);
  EXPECT_EQ(host_.consumers_at_zero(), std::vector<std::string>{key});
  EXPECT_EQ(logged("consumer " + key + " stopped"), 0u) << "echo waits for the host's word";
  stopped_ok(key);  // as the host does at zero
  EXPECT_EQ(logged("consumer " + key + " stopped"), 1u);

  // Forgotten: the next first reference starts it again.
  signed_in("ch-3", "shared-token");
  EXPECT_EQ(host_.consumer_calls().back().answer, 1);
  EXPECT_EQ(logged("consumer " + key + " started (1 channel(s); start 2)"), 1u);
}

TEST_F(EchoConsumers, ADifferentTokenIsAnotherConsumer) {
  const std::string a = key_of("token-a"), b = key_of("token-b");
  ASSERT_NE(a, b);
  signed_in("ch-1", "token-a");
  signed_in("ch-2", "token-b");
  expect_calls({acquired("ch-1", a, 1), acquired("ch-2", b, 1)});
  EXPECT_EQ(logged("consumer " + a + " started (1 channel(s); start 1)"), 1u);
  EXPECT_EQ(logged("consumer " + b + " started (1 channel(s); start 2)"), 1u);
}

TEST_F(EchoConsumers, ANewSignInReleasesTheKeyHeldBefore) {
  const std::string a = key_of("token-a"), b = key_of("token-b");
  signed_in("ch-1", "token-a");
  signed_in("ch-1", "token-b");
  expect_calls({acquired("ch-1", a, 1), acquired("ch-1", b, 1), released("ch-1", a, 0)});
  EXPECT_EQ(host_.consumers_at_zero(), std::vector<std::string>{a});
  stopped_ok(a);
  EXPECT_EQ(logged("consumer " + a + " stopped"), 1u);
  logout("ch-1");
  EXPECT_EQ(host_.consumer_calls().back().key, b) << "the logout lets go of the new key only";
  EXPECT_EQ(host_.consumer_calls().size(), 4u);
}

TEST_F(EchoConsumers, TheSameTokenAgainOnTheSameChannelIsOneReference) {
  const std::string key = key_of("token-a");
  signed_in("ch-1", "token-a");
  signed_in("ch-1", "token-a");
  expect_calls({acquired("ch-1", key, 1), acquired("ch-1", key, 1)});
  EXPECT_EQ(host_.consumer_references(key), 1u);
  EXPECT_EQ(logged("consumer " + key + " started (1 channel(s); start 1)"), 1u);
}

TEST_F(EchoConsumers, AFailedSignInKeepsTheKeyHeld) {
  const std::string key = key_of("token-a");
  signed_in("ch-1", "token-a");
  EXPECT_EQ(sign_in("ch-1", "invalid").status, XCONN_STATUS_ERROR);
  EXPECT_EQ(sign_in("ch-1", "").status, XCONN_STATUS_ERROR);
  expect_calls({acquired("ch-1", key, 1)});
}

TEST_F(EchoConsumers, TheKeyNeverCarriesTheToken) {
  const std::string secret = "planted-secret-4711";
  signed_in("ch-1", secret);
  signed_in("ch-2", secret);
  logout("ch-1");
  logout("ch-2");
  stopped_ok(key_of(secret));
  auto calls = host_.consumer_calls();
  ASSERT_EQ(calls.size(), 4u);
  for (const auto& call : calls) {
    EXPECT_TRUE(std::regex_match(call.key, std::regex("token-[0-9a-f]{16}"))) << call.key;
    EXPECT_EQ(call.key.find(secret), std::string::npos) << call.key;
    EXPECT_EQ(call.key.find("4711"), std::string::npos) << call.key;
  }
  for (const std::string& line : host_.log_lines()) EXPECT_EQ(line.find(secret), std::string::npos) << line;
}

TEST_F(EchoConsumers, AQrSignInHoldsNoConsumerAndReplacesATokenSignIn) {
  qr_signed_in("ch-1", "auth_q");
  EXPECT_TRUE(host_.consumer_calls().empty());

  const std::string key = key_of("token-a");
  signed_in("ch-2", "token-a");
  qr_signed_in("ch-2", "auth_r");
  expect_calls({acquired("ch-2", key, 1), released("ch-2", key, 0)});

  // A repeated poll of a finished run changes nothing.
  test_call& again = host_.new_call();
  api_->xconn_plugin_on_auth_status(instance_, again.c_call(), c_str("ch-2"), c_str("echo_qr_login"), c_str("auth_r"),
                                    0);
  ASSERT_TRUE(host_.wait(again));
  EXPECT_EQ(host_.consumer_calls().size(), 2u);
}

TEST_F(EchoConsumers, AStopThatRacedANewSignInKeepsTheConsumer) {
  // The host saw zero and sent the stop while another channel acquired the key again.
  const std::string key = key_of("token-a");
  signed_in("ch-1", "token-a");
  stopped_ok(key);
  EXPECT_EQ(logged("consumer " + key + " kept: 1 channel(s) here hold it"), 1u);
  EXPECT_EQ(logged("consumer " + key + " stopped"), 0u);
  signed_in("ch-2", "token-a");
  EXPECT_EQ(logged("consumer " + key + " started (2 channel(s); start 2)"), 0u) << "still running: no second start";

  logout("ch-1");
  logout("ch-2");
  stopped_ok(key);
  EXPECT_EQ(logged("consumer " + key + " stopped"), 1u);
}

TEST_F(EchoConsumers, AStopOfAnUnknownKeyIsAnsweredEmpty) {
  stopped_ok("token-0000000000000000");
  stopped_ok("");
  EXPECT_TRUE(host_.consumer_calls().empty());
}

TEST_F(EchoConsumers, AReferenceTheHostKeptAcrossARestartStillStartsTheConsumer) {
  const std::string key = key_of("token-a");
  host_.hold_consumer("ch-9", key);  // restored from the host's store; this echo has nothing running
  signed_in("ch-1", "token-a");
  expect_calls({acquired("ch-1", key, 2)});
  EXPECT_EQ(logged("consumer " + key + " started (2 channel(s); start 1)"), 1u);
}

TEST_F(EchoConsumers, AnAcquireTheHostRefusesLeavesTheSignInGood) {
  signed_in("", "token-a");  // the test host refuses an empty channel id, as the host refuses bad arguments
  ASSERT_EQ(host_.consumer_calls().size(), 1u);
  EXPECT_EQ(host_.consumer_calls()[0].answer, -1);
  EXPECT_EQ(logged("channel : the host refused shared consumer " + key_of("token-a")), 1u);
  logout("");
  EXPECT_EQ(host_.consumer_calls().size(), 1u) << "nothing was held, nothing is released";
}

TEST_F(EchoConsumers, ManyChannelsAtOnceLeaveNoReference) {
  constexpr int threads = 8, rounds = 40;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([this, t] {
      std::string channel = "ch-" + std::to_string(t);
      for (int r = 0; r < rounds; ++r) {
        signed_in(channel, (r + t) % 2 ? "token-a" : "token-b");
        if (r % 3 == 0) logout(channel);
      }
      logout(channel);
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(host_.consumer_references(key_of("token-a")), 0u);
  EXPECT_EQ(host_.consumer_references(key_of("token-b")), 0u);
  for (const auto& call : host_.consumer_calls()) EXPECT_GE(call.answer, 0) << call.channel << " " << call.key;
}

TEST_F(EchoConsumers, AnOlderHostWithoutConsumerCallsStillSignsIn) {
  // A 1.1 table that ends before the consumer calls: echo must not read past it.
  xconn_host_api older = *host_.api();
  older.struct_size = static_cast<uint32_t>(offsetof(xconn_host_api, xconn_host_consumer_acquire));
  older.xconn_host_consumer_acquire = nullptr;
  older.xconn_host_consumer_release = nullptr;
  void* instance = api_->xconn_plugin_on_create(&older, c_str("{}"));
  ASSERT_NE(instance, nullptr);
  test_call& call = host_.new_call();
  api_->xconn_plugin_on_auth_start(instance, call.c_call(), c_str("ch-1"), c_str("echo_token"), c_str("auth_t"),
                                   c_str(R"({"token":"abc"})"));
  ASSERT_TRUE(host_.wait(call));
  EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  test_call& out = host_.new_call();
  api_->xconn_plugin_on_auth_logout(instance, out.c_call(), c_str("ch-1"));
  ASSERT_TRUE(host_.wait(out));
  test_call& stop = host_.new_call();
  api_->xconn_plugin_on_stop(instance, stop.c_call());
  ASSERT_TRUE(host_.wait(stop));
  api_->xconn_plugin_on_destroy(instance);
  EXPECT_TRUE(host_.consumer_calls().empty());
}

}  // namespace
