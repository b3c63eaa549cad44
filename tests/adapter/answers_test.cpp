// The answer builders give the same bytes the adapters wrote by hand (the literals below are theirs).
#include <xconn/adapter/answers.hpp>

#include <gtest/gtest.h>

using namespace xconn::adapter;

TEST(answers, authenticated_binding) {
  EXPECT_EQ(auth_authenticated({"#room on irc.example", "bob"}),
            R"({"status":"authenticated","binding":{"display_name":"#room on irc.example","account_hint":"bob"}})");
  // Quotes, control characters and non-ASCII text are escaped as Boost.JSON does, no more.
  EXPECT_EQ(auth_authenticated({"a\"b\n\x01", "Zoë"}),
            "{\"status\":\"authenticated\",\"binding\":{\"display_name\":\"a\\\"b\\n\\u0001\",\"account_hint\":\"Zoë\"}}");
}

TEST(answers, auth_states_and_refusal) {
  EXPECT_EQ(auth_pending(), R"({"status":"pending"})");
  EXPECT_EQ(auth_failed("the code was wrong"), R"({"status":"failed","message":"the code was wrong"})");
  EXPECT_EQ(auth_state("expired"), R"({"status":"expired"})");
  EXPECT_EQ(auth_refused("invalid_credentials", "the token was refused").to_json(),
            R"({"code":"invalid_credentials","message":"the token was refused","retryable":false})");
}

TEST(answers, send_results_match_the_adapters) {
  EXPECT_EQ(send_not_signed_in(), R"({"ok":false,"error":"connection_not_authenticated","retryable":false})");
  EXPECT_EQ(send_target_unreachable(), R"({"ok":false,"error":"target_unreachable","retryable":true})");
  EXPECT_EQ(send_target_unreachable("down"), R"({"ok":false,"error":"target_unreachable","retryable":true,"message":"down"})");
  EXPECT_EQ(send_refused("chat_not_found", false), R"({"ok":false,"error":"chat_not_found","retryable":false})");
  EXPECT_EQ(send_refused("connection_not_authenticated", false, "HTTP 401: refused"),
            R"({"ok":false,"error":"connection_not_authenticated","retryable":false,"message":"HTTP 401: refused"})");
  EXPECT_EQ(send_delivered("-100:42"), R"({"ok":true,"external_key":"-100:42"})");
  EXPECT_EQ(send_delivered(), R"({"ok":true})");
  EXPECT_EQ(send_delivered_verified(true), R"({"ok":true,"verified":true})");
  EXPECT_EQ(send_delivered_verified(false), R"({"ok":true,"verified":false})");
}

TEST(answers, channel_reports) {
  EXPECT_EQ(report_connected(), R"({"status":"connected"})");
  EXPECT_EQ(report_degraded("target_unreachable"), R"({"status":"degraded","reason":"target_unreachable"})");
  EXPECT_EQ(report_revoked(), R"({"status":"revoked"})");
  EXPECT_EQ(report_expired(), R"({"status":"expired"})");
  EXPECT_EQ(channel_report("degraded", "nick_in_use"), R"({"status":"degraded","reason":"nick_in_use"})");
}

TEST(answers, tool_results) {
  EXPECT_EQ(tool_sent().with("message_id", nullptr).json(), R"({"status":"sent","message_id":null})");
  EXPECT_EQ(tool_sent().with("message_id", 17).with("file_ref", "f1").with("media_type", "photo").json(),
            R"({"status":"sent","message_id":17,"file_ref":"f1","media_type":"photo"})");
  EXPECT_EQ(tool_sent().with("lines", std::size_t{3}).json(), R"({"status":"sent","lines":3})");
  EXPECT_EQ(tool_sent().with("http_status", 204).json(), R"({"status":"sent","http_status":204})");
  EXPECT_EQ(tool_result().with("names", boost::json::array{"alice", "@bob"}).json(), R"({"names":["alice","@bob"]})");
  std::string as_text = tool_result().with("message_id", "m1");
  EXPECT_EQ(as_text, R"({"message_id":"m1"})");
  EXPECT_EQ(tool_result().json(), "{}");
  // std::string values (a plugin's usual kind), json values and containers are all taken.
  std::string ref = "f2";
  const std::string media = "video";
  boost::json::value id = 5;
  EXPECT_EQ(tool_sent().with("message_id", id).with("file_ref", ref).with("media_type", media).json(),
            R"({"status":"sent","message_id":5,"file_ref":"f2","media_type":"video"})");
  auto built = tool_result();
  built.with("names", std::vector<std::string>{"a", "b"}).with("ok", true).with("none", nullptr);
  EXPECT_EQ(built.json(), R"({"names":["a","b"],"ok":true,"none":null})");
}

TEST(answers, shared_errors) {
  EXPECT_EQ(not_signed_in().to_json(),
            R"({"code":"connection_not_authenticated","message":"the channel is not signed in","retryable":false})");
  EXPECT_EQ(no_such_auth_flow().to_json(), R"({"code":"auth_flow_not_found","message":"no such auth flow","retryable":false})");
  EXPECT_EQ(no_such_tool().to_json(), R"({"code":"tool_not_found","message":"no such tool","retryable":false})");
  EXPECT_EQ(binding_not_kept().to_json(),
            R"({"code":"store_failed","message":"the binding could not be kept","retryable":true})");
  EXPECT_EQ(target_unreachable("the IRC server is not connected").to_json(),
            R"({"code":"target_unreachable","message":"the IRC server is not connected","retryable":true})");
  EXPECT_EQ(invalid_argument("text must not be empty").code, "invalid_argument");
  EXPECT_FALSE(invalid_input("secret: at least 16 bytes").retryable);
}

TEST(answers, http_answers_match_the_webhook) {
  EXPECT_EQ(http_error_body("not_found", "no such route"), R"({"error":{"code":"not_found","message":"no such route"}})");
  EXPECT_EQ(http_error(404, "not_found", "no such route"),
            R"({"status":404,"content_type":"application/json","body":"{\"error\":{\"code\":\"not_found\",\"message\":\"no such route\"}}"})");
  EXPECT_EQ(http_error_body("invalid_body", "text: required", "text"),
            R"({"error":{"code":"invalid_body","message":"text: required","field":"text"}})");
  EXPECT_EQ(retry_after_header(1), R"({"Retry-After":"1"})");
  EXPECT_EQ(http_error(503, "store_failed", "again", {}, retry_after_header(1)),
            http_answer(503, R"({"error":{"code":"store_failed","message":"again"}})", "application/json",
                        R"({"Retry-After":"1"})"));
  EXPECT_EQ(http_json(202, tool_result().with("message_id", nullptr).with("duplicate", true)),
            http_answer(202, R"({"message_id":null,"duplicate":true})"));
}
