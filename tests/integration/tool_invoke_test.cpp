// tool.invoke on the real server with echo's tools: routing by the envelope only, the checks before the plugin
// runs, business errors, timeouts, acks out of order, many in flight, idempotency of side-effect tools
// (spec §8.18-8.19, §10; docs/protocol.md "Tools").
#include "core/dataplane/ws_session.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// "abc€😀" and its reverse by code point (split literals keep the hex escapes apart from the letters).
const std::string mixed = "abc" "\xe2\x82\xac" "\xf0\x9f\x98\x80";
const std::string mixed_reversed = "\xf0\x9f\x98\x80" "\xe2\x82\xac" "cba";

// A successful ack: {"tool_id","result"} and no error.
json::object expect_result(const std::optional<json::object>& ack, const std::string& tool_id) {
  EXPECT_TRUE(ack);
  if (!ack) return {};
  EXPECT_EQ(ack->at("type"), "tool.invoke.ack") << json::serialize(*ack);
  EXPECT_EQ(error_code(*ack), "") << json::serialize(*ack);
  auto p = payload_of(*ack);
  EXPECT_EQ(text_of(p, "tool_id"), tool_id);
  EXPECT_EQ(p.size(), 2u) << p;
  EXPECT_TRUE(p.contains("result") && p["result"].is_object()) << p;
  return p.contains("result") && p["result"].is_object() ? p["result"].as_object() : json::object{};
}

// A refusal: type error with this code.
void expect_error(const std::optional<json::object>& reply, const std::string& code, const std::string& why) {
  ASSERT_TRUE(reply) << why;
  EXPECT_EQ(reply->at("type"), "error") << why;
  EXPECT_EQ(error_code(*reply), code) << why;
}

// Whether a kept packet answers this request.
bool answers(const json::object& packet, const json::object& request) {
  auto* r = packet.if_contains("request_id");
  return r && *r == request.at("request_id");
}

class tool_invoke : public ::testing::Test {
 protected:
  void SetUp() override {
    server.start();
    c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
  }

  server_fixture server;
  std::unique_ptr<dp_client> c;
  std::string channel;
};

TEST_F(tool_invoke, echo_reverse_answers_the_text_reversed_by_code_point) {
  auto result = expect_result(c->invoke(channel, "echo_reverse", {{"text", mixed}}), "echo_reverse");
  EXPECT_EQ(text_of(result, "text"), mixed_reversed);
  // arguments and context default to {} when left out: a call without context works.
  auto ack = c->request("tool.invoke", {{"tool_id", "echo_reverse"}, {"arguments", {{"text", "ab"}}}}, channel);
  EXPECT_EQ(text_of(expect_result(ack, "echo_reverse"), "text"), "ba");
}

TEST_F(tool_invoke, routing_uses_only_the_envelope_channel) {
  std::string unauthenticated = c->open();
  ASSERT_FALSE(unauthenticated.empty());
  // Whatever arguments.connector_channel_id says, the envelope's channel runs the tool.
  for (const std::string& in_arguments : {unauthenticated, std::string("garbage"), std::string("")}) {
    auto ack = c->invoke(channel, "echo_reverse", {{"connector_channel_id", in_arguments}, {"text", "xyz"}});
    EXPECT_EQ(text_of(expect_result(ack, "echo_reverse"), "text"), "zyx") << in_arguments;
  }
  // And the other way round: the signed-in channel named in the arguments does not help a signed-out envelope.
  auto refused = c->invoke(unauthenticated, "echo_reverse", {{"connector_channel_id", channel}, {"text", "xyz"}});
  expect_error(refused, "connection_not_authenticated", "signed-out envelope");
}

TEST_F(tool_invoke, a_tool_not_in_the_card_is_tool_not_found_before_the_auth_check) {
  expect_error(c->invoke(channel, "no_such_tool", {}), "tool_not_found", "authenticated channel");
  std::string unauthenticated = c->open();
  expect_error(c->invoke(unauthenticated, "no_such_tool", {}), "tool_not_found", "signed-out channel");
}

TEST_F(tool_invoke, a_signed_out_channel_is_connection_not_authenticated) {
  std::string unauthenticated = c->open();
  for (const auto& tool : card_tool_ids(c->card()))
    expect_error(c->invoke(unauthenticated, tool, {{"text", "a"}}), "connection_not_authenticated", tool);
}

TEST_F(tool_invoke, a_tool_whose_profile_was_not_negotiated_is_unavailable) {
  auto v1 = dp_client::connect(server.port(), server.key(), "echo", {{"supported_profiles", json::array{"xagent.im.v1"}}});
  ASSERT_TRUE(v1);
  std::string id = v1->open_authenticated();
  ASSERT_FALSE(id.empty());
  expect_error(v1->invoke(id, "echo_reverse", {{"text", "abc"}}), "connector_channel_unavailable", "im.v1 socket");
}

TEST_F(tool_invoke, a_malformed_payload_is_invalid_packet) {
  struct bad {
    const char* why;
    json::object payload;
  };
  std::vector<bad> cases = {
      {"no tool_id", {{"arguments", {{"text", "a"}}}}},
      {"numeric tool_id", {{"tool_id", 5}, {"arguments", {{"text", "a"}}}}},
      {"arguments a string", {{"tool_id", "echo_reverse"}, {"arguments", "text"}}},
      {"arguments an array", {{"tool_id", "echo_reverse"}, {"arguments", json::array{"a"}}}},
      {"context a string", {{"tool_id", "echo_reverse"}, {"arguments", {{"text", "a"}}}, {"context", "c"}}},
      {"idempotency_key a number",
       {{"tool_id", "echo_reverse"}, {"arguments", {{"text", "a"}}}, {"idempotency_key", 12}}},
  };
  for (auto& tc : cases) expect_error(c->request("tool.invoke", tc.payload, channel), "invalid_packet", tc.why);
}

TEST_F(tool_invoke, a_business_failure_is_the_ack_with_the_plugins_code) {
  auto ack = c->invoke(channel, "echo_fail", {{"code", "x_y"}});
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("type"), "tool.invoke.ack");
  EXPECT_EQ(error_code(*ack), "x_y");
  EXPECT_TRUE(ack->at("error").as_object().contains("message"));
  EXPECT_EQ(payload_of(*ack), (json::object{{"tool_id", "echo_fail"}}));
}

TEST_F(tool_invoke, acks_go_out_as_answers_arrive) {
  // The slow call first, on the same channel: a timer in the plugin does not hold the channel.
  auto slow = c->send("tool.invoke", {{"tool_id", "echo_sleep"}, {"arguments", {{"ms", 800}}}}, channel);
  auto fast = c->send("tool.invoke", {{"tool_id", "echo_reverse"}, {"arguments", {{"text", "ab"}}}}, channel);
  auto fast_ack = c->answer(fast, 5s);
  EXPECT_EQ(text_of(expect_result(fast_ack, "echo_reverse"), "text"), "ba");
  // The sleep's ack had not arrived when the reverse's did.
  for (const auto& p : c->kept()) EXPECT_FALSE(answers(p, slow)) << "echo_sleep answered first";
  auto slow_ack = c->answer(slow, 5s);
  expect_result(slow_ack, "echo_sleep");
}

TEST_F(tool_invoke, three_hundred_invocations_in_flight_on_one_socket) {
  constexpr int count = 300;
  std::vector<json::object> sent;
  auto start = steady::now();
  for (int i = 0; i < count; ++i)
    sent.push_back(c->send("tool.invoke",
                           {{"tool_id", "echo_reverse"},
                            {"arguments", {{"text", "n-" + std::to_string(i)}}},
                            {"context", {{"tool_call_id", "call_" + std::to_string(i)}}}},
                           channel));
  // Collected by request_id, in whatever order they come, within one deadline for all.
  auto until = start + 30s;
  int matched = 0;
  for (int i = 0; i < count; ++i) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now());
    if (left.count() <= 0) break;
    auto ack = c->answer(sent[i], left);
    if (!ack) break;
    std::string expected = "n-" + std::to_string(i);
    std::reverse(expected.begin(), expected.end());
    if (text_of(expect_result(ack, "echo_reverse"), "text") == expected) ++matched;
  }
  auto seconds = std::chrono::duration<double>(steady::now() - start).count();
  EXPECT_EQ(matched, count);
  std::cout << "[ rate     ] " << matched << " echo_reverse invocations on one socket in " << seconds << " s: "
            << static_cast<int>(matched / seconds) << " invocations/s" << std::endl;
}

TEST_F(tool_invoke, past_the_in_flight_cap_reading_pauses_and_nothing_is_lost) {
  // More slow calls than a socket may have waiting: the server stops reading until answers free room.
  const int count = ws_session::max_in_flight + 100;
  std::vector<json::object> sent;
  for (int i = 0; i < count; ++i)
    sent.push_back(c->send("tool.invoke", {{"tool_id", "echo_sleep"}, {"arguments", {{"ms", 300}}}}, channel));
  auto until = steady::now() + 30s;
  int answered = 0;
  for (const auto& request : sent) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now());
    if (left.count() <= 0) break;
    auto ack = c->answer(request, left);
    if (!ack) break;
    auto result = expect_result(ack, "echo_sleep");
    if (auto* slept = result.if_contains("slept_ms"); slept && *slept == 300) ++answered;
  }
  EXPECT_EQ(answered, count);
  auto pong = c->request("ping");  // still reading
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->at("type"), "pong");
}

TEST_F(tool_invoke, a_side_effect_tool_is_idempotent_by_tool_call_id_and_idempotency_key) {
  auto send = [&](const std::string& channel_id, const std::string& call, const std::string& key = "") {
    json::object payload{{"tool_id", "echo_send_message"},
                         {"arguments", {{"text", "hello"}}},
                         {"context", {{"session_id", "session_1"}, {"tool_call_id", call}}}};
    if (!key.empty()) payload["idempotency_key"] = key;
    auto ack = c->request("tool.invoke", std::move(payload), channel_id, 10s);
    return expect_result(ack, "echo_send_message");
  };
  auto first = send(channel, "call_1");
  EXPECT_EQ(text_of(first, "status"), "sent");
  std::string id = text_of(first, "message_id");
  EXPECT_FALSE(id.empty()) << first;

  // The repeat gets the same answer without running the tool again.
  EXPECT_EQ(send(channel, "call_1"), first);
  // Another call id is another message.
  auto other = send(channel, "call_2");
  EXPECT_NE(text_of(other, "message_id"), id);
  EXPECT_FALSE(text_of(other, "message_id").empty());

  // payload.idempotency_key wins over tool_call_id: call_1 with a key is not call_1's repeat...
  auto keyed = send(channel, "call_1", "key_A");
  EXPECT_NE(text_of(keyed, "message_id"), id);
  EXPECT_NE(text_of(keyed, "message_id"), text_of(other, "message_id"));
  // ...and the same key under another tool_call_id is the keyed call's repeat.
  EXPECT_EQ(send(channel, "call_9", "key_A"), keyed);

  // A repeat sent while the first may still run waits for it: both get the one answer.
  json::object racing{{"tool_id", "echo_send_message"},
                      {"arguments", {{"text", "race"}}},
                      {"context", {{"tool_call_id", "call_race"}}}};
  auto one = c->send("tool.invoke", racing, channel);
  auto two = c->send("tool.invoke", racing, channel);
  auto first_race = expect_result(c->answer(one, 10s), "echo_send_message");
  EXPECT_FALSE(text_of(first_race, "message_id").empty());
  EXPECT_EQ(expect_result(c->answer(two, 10s), "echo_send_message"), first_race);

  // Scoped to the channel: the same tool_call_id on another channel is a new message.
  std::string second = c->open_authenticated();
  ASSERT_FALSE(second.empty());
  EXPECT_NE(text_of(send(second, "call_1"), "message_id"), id);
}

TEST(tool_invoke_timeout, past_the_timeout_the_ack_is_tool_timeout_and_the_socket_stays_usable) {
  server_fixture server({"echo.so"}, [](config& cfg) { cfg.tools.timeout_s = 1; });
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  std::string channel = c->open_authenticated();
  ASSERT_FALSE(channel.empty());

  auto start = steady::now();
  auto sleep = c->send("tool.invoke", {{"tool_id", "echo_sleep"}, {"arguments", {{"ms", 3000}}}}, channel);
  auto ack = c->answer(sleep, 2500ms);
  auto took = steady::now() - start;
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("type"), "tool.invoke.ack");
  EXPECT_EQ(error_code(*ack), "tool_timeout");
  EXPECT_EQ(text_of(payload_of(*ack), "tool_id"), "echo_sleep");
  EXPECT_FALSE(payload_of(*ack).contains("result"));
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 2900ms) << "the host waited for the plugin instead of its timeout";

  // The socket still answers.
  auto pong = c->request("ping");
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->at("type"), "pong");

  // The plugin is degraded, with the code, in /health.
  http_reply health;
  EXPECT_TRUE(wait_until(
      [&] {
        health = http_get(server.port(), "/connectors/echo/health", server.key());
        auto v = health.json();
        return v.is_object() && v.as_object().contains("adapter") &&
               v.as_object().at("adapter").as_object().at("health") == "degraded";
      },
      5s))
      << health.body;
  EXPECT_EQ(health.status, 200);
  auto body = health.json().as_object();
  EXPECT_EQ(body["status"], "degraded");
  EXPECT_EQ(body["adapter"].as_object()["last_error_code"], "tool_timeout");

  // The signed-in channel's descriptor follows the plugin's health, and the change is pushed to its route.
  // (Earlier pushes, such as the one for the sign-in, are passed over.)
  EXPECT_EQ(last_pushed_status(*c, channel, "degraded", 5s), "degraded");
  auto get = c->get_descriptor(channel);
  ASSERT_TRUE(get);
  EXPECT_EQ(descriptor_in(*get)["connection"].as_object()["status"], "degraded");

  // The plugin's late answer (3 s after the call) is dropped: keep the socket busy past it and look.
  auto last_ping = steady::now();
  wait_until(
      [&] {
        if (steady::now() - last_ping >= 100ms) {
          last_ping = steady::now();
          EXPECT_TRUE(c->request("ping"));
        }
        return steady::now() - start > 3600ms;
      },
      10s);
  ASSERT_TRUE(c->request("ping"));
  for (const auto& p : c->kept())
    EXPECT_FALSE(answers(p, sleep)) << "a second answer to the timed-out call: " << json::serialize(p);

  // A call answered in time lifts the host's verdict: healthy again, and the descriptor is pushed as connected.
  EXPECT_EQ(text_of(expect_result(c->invoke(channel, "echo_reverse", {{"text", "abc"}}), "echo_reverse"), "text"), "cba");
  EXPECT_EQ(last_pushed_status(*c, channel, "connected", 5s), "connected");
  auto recovered = http_get(server.port(), "/connectors/echo/health", server.key()).json().as_object();
  EXPECT_EQ(recovered["status"], "ok") << recovered;
}

}  // namespace
}  // namespace xconn::test
