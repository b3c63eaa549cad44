// tool.invoke on the real server with echo (spec §8.18-8.19, §10.1; docs/protocol.md "Tools").
#include "support/server_fixture.hpp"
#include "support/xagent_session.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <set>

namespace xconn::test {
namespace {
namespace json = boost::json;

class tools : public ::testing::Test {
 protected:
  void SetUp() override {
    channel = std::string(s.open().at("connector_channel_id").as_string());
    ASSERT_EQ(s.sign_in(channel, "tools-test-token").at("payload").at("status"), "authenticated");
  }

  server_fixture server{{"echo.so"}, [](config& c) { c.tools.timeout_s = 1; }};
  // Started first and stopped last: members are made in order and destroyed in reverse.
  xagent_session s{(server.start(), server.port()), server.key()};
  std::string channel;
};

TEST_F(tools, a_tool_runs_on_the_envelope_channel_and_ignores_the_argument_of_that_name) {
  auto ack = s.invoke(channel, "echo_reverse", {{"text", "héllo"}, {"connector_channel_id", "cch_someoneElse"}},
                      {{"session_id", "session_1"}, {"tool_call_id", "call_1"}});
  ASSERT_EQ(ack.at("type"), "tool.invoke.ack");
  EXPECT_EQ(ack.at("payload"), (json::object{{"tool_id", "echo_reverse"}, {"result", {{"text", "olléh"}}}}));
  EXPECT_FALSE(ack.contains("error"));
}

TEST_F(tools, refusals_before_the_plugin_runs) {
  EXPECT_EQ(error_code_of(s.invoke(channel, "no_such_tool", {})), "tool_not_found");
  auto missing = s.call("tool.invoke", channel, {{"arguments", json::object{}}});
  EXPECT_EQ(missing.at("type"), "error");
  EXPECT_EQ(error_code_of(missing), "invalid_packet");
  EXPECT_EQ(error_code_of(s.call("tool.invoke", channel, {{"tool_id", "echo_reverse"}, {"arguments", "text"}})),
            "invalid_packet");
  std::string fresh(s.open().at("connector_channel_id").as_string());
  auto unauthenticated = s.invoke(fresh, "echo_reverse", {{"text", "x"}});
  EXPECT_EQ(unauthenticated.at("type"), "error");
  EXPECT_EQ(error_code_of(unauthenticated), "connection_not_authenticated");
  // Tool not in the card comes before authentication.
  EXPECT_EQ(error_code_of(s.invoke(fresh, "no_such_tool", {})), "tool_not_found");
}

TEST_F(tools, a_tool_of_a_profile_the_socket_did_not_negotiate_is_unavailable) {
  xagent_session v1(server.port(), server.key(), "echo", "im.echo", "", {"xagent.im.v1"});
  auto ack = v1.open(channel);
  for (const auto& t : descriptor_of(ack).at("tools").as_array()) EXPECT_EQ(t.at("status"), "not_supported");
  EXPECT_EQ(error_code_of(v1.invoke(channel, "echo_reverse", {{"text", "x"}})), "connector_channel_unavailable");
}

TEST_F(tools, business_failures_ride_in_the_ack) {
  auto ack = s.invoke(channel, "echo_fail", {{"code", "quota_exceeded"}});
  EXPECT_EQ(ack.at("type"), "tool.invoke.ack");
  EXPECT_EQ(error_code_of(ack), "quota_exceeded");
  EXPECT_EQ(ack.at("payload").at("tool_id"), "echo_fail");
  EXPECT_EQ(error_code_of(s.invoke(channel, "echo_reverse", {{"text", 5}})), "invalid_arguments");
}

TEST_F(tools, a_tool_past_the_timeout_answers_tool_timeout_and_the_socket_stays_usable) {
  auto ack = s.invoke(channel, "echo_sleep", {{"ms", 2500}});
  EXPECT_EQ(ack.at("type"), "tool.invoke.ack");
  EXPECT_EQ(error_code_of(ack), "tool_timeout");
  EXPECT_EQ(s.request(make_packet("ping")).at("type"), "pong");
  EXPECT_EQ(s.invoke(channel, "echo_reverse", {{"text", "ok"}}).at("payload").at("result").at("text"), "ko");
  auto health = http_get(server.port(), "/connectors/echo/health", server.key()).json();
  EXPECT_EQ(health.at("adapter").at("health"), "degraded");
  EXPECT_EQ(health.at("adapter").at("last_error_code"), "tool_timeout");
  // The late answer of the sleeping tool is dropped: nothing more arrives for that request.
  EXPECT_FALSE(s.wait_push("tool.invoke.ack", std::chrono::milliseconds(2000)));
}

TEST_F(tools, acks_come_as_answers_arrive_not_in_request_order) {
  auto slow = make_packet("tool.invoke", {{"tool_id", "echo_sleep"}, {"arguments", {{"ms", 600}}}}, channel);
  s.ws().send_json(slow);
  auto fast = s.invoke(channel, "echo_reverse", {{"text", "ab"}});
  EXPECT_EQ(fast.at("payload").at("result").at("text"), "ba");
  auto late = s.wait_push("tool.invoke.ack");  // the slow ack arrives after the fast one
  ASSERT_TRUE(late);
  EXPECT_EQ(late->at("reply_to"), slow.at("packet_id"));
  EXPECT_EQ(late->at("payload").at("result").at("slept_ms"), 600);
}

TEST_F(tools, three_hundred_invocations_in_flight_on_one_socket_all_answer) {
  constexpr int n = 300;
  std::map<std::string, std::string> expected;  // request_id -> reversed text
  std::vector<json::object> packets;
  for (int i = 0; i < n; ++i) {
    std::string text = "m" + std::to_string(i);
    auto p = make_packet("tool.invoke", {{"tool_id", "echo_reverse"}, {"arguments", {{"text", text}}}}, channel);
    expected[std::string(p.at("request_id").as_string())] = std::string(text.rbegin(), text.rend());
    packets.push_back(std::move(p));
  }
  auto start = std::chrono::steady_clock::now();
  for (const auto& p : packets) s.ws().send_json(p);
  int answered = 0;
  while (answered < n) {
    auto ack = s.wait_push("tool.invoke.ack", std::chrono::seconds(10));
    ASSERT_TRUE(ack) << "only " << answered << " of " << n << " answered";
    auto it = expected.find(std::string(ack->at("request_id").as_string()));
    ASSERT_NE(it, expected.end());
    EXPECT_EQ(ack->at("payload").at("result").at("text").as_string(), it->second);
    expected.erase(it);
    ++answered;
  }
  auto ms = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  std::cout << "300 echo_reverse in flight on one socket: " << ms / 1000.0 << " ms, "
            << (n * 1e6 / static_cast<double>(ms)) << " invocations/s\n";
}

TEST_F(tools, a_side_effect_tool_runs_once_per_tool_call_id) {
  auto send = [&](json::object context, json::object extra = {}) {
    json::object payload{{"tool_id", "echo_send_message"}, {"arguments", {{"text", "hi"}}}, {"context", std::move(context)}};
    for (auto& kv : extra) payload[kv.key()] = kv.value();
    auto ack = s.call("tool.invoke", channel, std::move(payload));
    EXPECT_EQ(ack.at("payload").at("result").at("status"), "sent");
    return std::string(ack.at("payload").at("result").at("message_id").as_string());
  };
  auto first = send({{"tool_call_id", "call_A"}});
  EXPECT_EQ(send({{"tool_call_id", "call_A"}}), first);
  EXPECT_NE(send({{"tool_call_id", "call_B"}}), first);
  // The extension idempotency_key takes precedence over tool_call_id.
  auto keyed = send({{"tool_call_id", "call_C"}}, {{"idempotency_key", "key_1"}});
  EXPECT_EQ(send({{"tool_call_id", "call_D"}}, {{"idempotency_key", "key_1"}}), keyed);
  // Without any key every call runs.
  EXPECT_NE(send({}), send({}));
}

TEST_F(tools, concurrent_repeats_of_one_call_share_one_run) {
  std::vector<json::object> packets;
  for (int i = 0; i < 20; ++i)
    packets.push_back(make_packet("tool.invoke",
                                  {{"tool_id", "echo_send_message"}, {"arguments", {{"text", "once"}}},
                                   {"context", {{"tool_call_id", "call_same"}}}},
                                  channel));
  for (const auto& p : packets) s.ws().send_json(p);
  std::set<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    auto ack = s.wait_push("tool.invoke.ack");
    ASSERT_TRUE(ack);
    ids.insert(std::string(ack->at("payload").at("result").at("message_id").as_string()));
  }
  EXPECT_EQ(ids.size(), 1u);
}

}  // namespace
}  // namespace xconn::test
