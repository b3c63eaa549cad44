// echo's auth flows through the C ABI alone: the token form, the QR login and its refresh, cancel and logout.
#include "support/abi_test_host.hpp"
#include "support/echo_instance.hpp"
#include "support/test_support.hpp"

#include <boost/dll/shared_library.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace dll = boost::dll;
namespace json = boost::json;
using namespace std::chrono_literals;
using namespace xconn::test;  // the ABI test host: open_plugin, entry, test_call, the instances

// ---- echo: auth flows through the ABI ----

class EchoAuthAbi : public EchoInstance {
 protected:
  test_call& auth_start(std::string_view channel, std::string_view flow, std::string_view session,
                        std::string_view input = "{}") {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_auth_start(instance_, call.c_call(), c_str(channel), c_str(flow), c_str(session),
                                     c_str(input));
    EXPECT_TRUE(host_.wait(call)) << "auth_start never answered";
    return call;
  }

  test_call& auth_status(std::string_view channel, std::string_view session, bool refresh = false,
                         std::string_view flow = "echo_qr_login") {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_auth_status(instance_, call.c_call(), c_str(channel), c_str(flow), c_str(session),
                                      refresh ? 1 : 0);
    EXPECT_TRUE(host_.wait(call)) << "auth_status never answered";
    return call;
  }

  test_call& auth_cancel(std::string_view channel, std::string_view session) {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_auth_cancel(instance_, call.c_call(), c_str(channel), c_str("echo_qr_login"),
                                      c_str(session));
    EXPECT_TRUE(host_.wait(call)) << "auth_cancel never answered";
    return call;
  }

  test_call& auth_logout(std::string_view channel) {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_auth_logout(instance_, call.c_call(), c_str(channel));
    EXPECT_TRUE(host_.wait(call)) << "auth_logout never answered";
    return call;
  }

  // An OK answer whose status is the given one.
  json::object expect_status(const test_call& call, std::string_view status) {
    EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
    if (call.status != XCONN_STATUS_OK) return {};
    json::object answer = call.result();
    EXPECT_EQ(answer.at("status").as_string(), status) << call.json;
    return answer;
  }

  void expect_empty_ok(const test_call& call) {
    EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
    EXPECT_EQ(call.json, "{}");
  }
};

TEST_F(EchoAuthAbi, TokenSignsInWithAHashHintAndNothingOfTheToken) {
  const std::string secret = "planted-secret-4711";  // sha256 000d2bc626104e90...
  test_call& call = auth_start("ch-1", "echo_token", "auth_1", R"({"token":")" + secret + "\"}");
  json::object answer = expect_status(call, "authenticated");
  // This host keeps no plugin state, so the hint's key is the run's own: its form is known, not its value.
  auto hint = std::string(answer.at("binding").at("account_hint").as_string());
  EXPECT_TRUE(std::regex_match(hint, std::regex("echo-[0-9a-f]{6}"))) << hint;
  EXPECT_NE(hint, "echo-000d2b") << "no bare hash of the token";
  EXPECT_EQ(answer.at("binding").at("display_name"), "Echo user");
  EXPECT_EQ(call.json.find(secret), std::string::npos) << call.json;

  json::object abc = expect_status(auth_start("ch-2", "echo_token", "auth_2", R"({"token":"abc"})"), "authenticated");
  EXPECT_NE(abc.at("binding").at("account_hint").as_string(), "echo-ba7816");  // sha256("abc") = ba7816bf...
  EXPECT_NE(abc.at("binding").at("account_hint"), answer.at("binding").at("account_hint"));

  for (const std::string& line : host_.log_lines()) EXPECT_EQ(line.find(secret), std::string::npos) << line;
}

TEST_F(EchoAuthAbi, TokenInvalidFailsWithoutRepeatingIt) {
  test_call& call = auth_start("ch-1", "echo_token", "auth_1", R"({"token":"invalid"})");
  expect_error(call, "invalid_credentials");
  EXPECT_EQ(std::string(call.result().at("message").as_string()).find("invalid"), std::string::npos) << call.json;
  expect_error(auth_start("ch-1", "echo_token", "auth_2", R"({"token":""})"), "invalid_input");
  expect_error(auth_start("ch-1", "echo_nope", "auth_3"), "auth_flow_not_found");
}

TEST_F(EchoAuthAbi, QrPendingScannedAuthenticated) {
  std::int64_t before = unix_now_ms();
  json::object pending = expect_status(auth_start("ch-1", "echo_qr_login", "auth_q"), "pending");
  std::int64_t after = unix_now_ms();
  std::string qr(pending.at("qr_code_text").as_string());
  EXPECT_TRUE(std::regex_match(qr, std::regex("echo-qr:[0-9A-Za-z]{22}"))) << qr;
  EXPECT_GE(pending.at("expires_at").as_int64(), before + 120000);
  EXPECT_LE(pending.at("expires_at").as_int64(), after + 120000);
  EXPECT_EQ(pending.at("poll_interval_millis").as_int64(), 1000);
  EXPECT_FALSE(pending.at("message").as_string().empty());
  EXPECT_FALSE(pending.contains("binding"));

  json::object other = expect_status(auth_start("ch-2", "echo_qr_login", "auth_r"), "pending");
  EXPECT_NE(other.at("qr_code_text"), pending.at("qr_code_text")) << "codes must not be guessable from another";

  EXPECT_FALSE(expect_status(auth_status("ch-1", "auth_q"), "scanned").contains("binding"));
  json::object done = expect_status(auth_status("ch-1", "auth_q"), "authenticated");
  EXPECT_EQ(done.at("binding"), json::parse(R"({"display_name":"Echo user","account_hint":"echo-qr"})"));
}

TEST_F(EchoAuthAbi, QrRefreshIssuesANewCode) {
  json::object first = expect_status(auth_start("ch-1", "echo_qr_login", "auth_q"), "pending");
  expect_status(auth_status("ch-1", "auth_q"), "scanned");
  json::object fresh = expect_status(auth_status("ch-1", "auth_q", true), "pending");
  EXPECT_NE(fresh.at("qr_code_text"), first.at("qr_code_text"));
  EXPECT_GE(fresh.at("expires_at").as_int64(), first.at("expires_at").as_int64());
  expect_status(auth_status("ch-1", "auth_q"), "scanned");  // the scan starts over
}

TEST_F(EchoAuthAbi, UnknownSessionIsNotFound) {
  expect_error(auth_status("ch-1", "auth_never"), "auth_session_not_found");
  expect_status(auth_start("ch-1", "echo_qr_login", "auth_q"), "pending");
  expect_error(auth_status("ch-2", "auth_q"), "auth_session_not_found");  // another channel's
  expect_error(auth_status("ch-1", "auth_q", false, "echo_token"), "auth_session_not_found");
}

TEST_F(EchoAuthAbi, CancelDropsTheSession) {
  expect_status(auth_start("ch-1", "echo_qr_login", "auth_q"), "pending");
  expect_empty_ok(auth_cancel("ch-1", "auth_q"));
  expect_error(auth_status("ch-1", "auth_q"), "auth_session_not_found");
  expect_empty_ok(auth_cancel("ch-1", "auth_q"));  // again, and unknown: still {}
}

TEST_F(EchoAuthAbi, LogoutEndsTheChannelsSessionsAndIsIdempotent) {
  auto signed_in = expect_status(auth_start("ch-1", "echo_token", "auth_t", R"({"token":"abc"})"), "authenticated");
  auto hint = std::string(signed_in.at("binding").at("account_hint").as_string());
  expect_status(auth_start("ch-1", "echo_qr_login", "auth_q"), "pending");
  expect_status(auth_start("ch-2", "echo_qr_login", "auth_r"), "pending");
  expect_empty_ok(auth_logout("ch-1"));
  expect_error(auth_status("ch-1", "auth_q"), "auth_session_not_found");
  expect_status(auth_status("ch-2", "auth_r"), "scanned");  // another channel is untouched
  expect_empty_ok(auth_logout("ch-1"));
  expect_empty_ok(auth_logout("ch-never"));

  std::vector<std::string> logs = host_.log_lines();
  EXPECT_NE(std::find(logs.begin(), logs.end(), "channel ch-1 signed in with echo_token as " + hint), logs.end());
  EXPECT_NE(std::find(logs.begin(), logs.end(), "channel ch-1 signed out"), logs.end());
}

}  // namespace
