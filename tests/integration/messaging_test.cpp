// Inbound messages on the real server, driven through echo's /inject and tools and a real WebSocket client:
// delivery as chat.message (IM v2) or message.push (IM v1), acks, redelivery with the same id, rejections,
// context riding with the next message, msg_id dedup, bursts within the window, and the /health and /metrics
// counters (IM v2 §5, §7, §9; IM v1 §5, §7; docs/protocol.md "Inbound messages", "Outbound messages"). The cap and
// expiry are in messaging_limits_test.cpp, restarts in messaging_durability_test.cpp.
#include "support/data_plane.hpp"
#include "support/messaging_fixture.hpp"
#include "support/server_fixture.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

TEST_F(messaging, an_injected_message_is_delivered_as_chat_message_and_leaves_the_store_once_acked) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  ASSERT_FALSE(channel.empty());
  auto r = inject(channel, {{"text", "hello there"}, {"sender_id", "u1"}, {"sender_name", "Ann"}, {"at", 1790000000000}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto reply = r.json().as_object();
  EXPECT_TRUE(is_random_id(text_of(reply, "message_id"), "msg_")) << r.body;

  auto m = c->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "message_id"), text_of(reply, "message_id"));
  EXPECT_EQ(text_of(p, "text"), "hello there");
  EXPECT_EQ(p.at("created_at"), json::value(1790000000000));
  EXPECT_EQ(p.at("sender"), (json::object{{"id", "u1"}, {"name", "Ann"}}));
  for (auto forbidden : {"session_id", "user_id", "connector_id", "role", "user_connector_id"})
    EXPECT_FALSE(p.contains(forbidden)) << forbidden;
  EXPECT_EQ(inbound_count("pending"), 1);

  accept(*c, channel, *m);
  EXPECT_TRUE(wait_inbound("pending", 0));
  EXPECT_EQ(inbound_count("delivered"), 1);
  EXPECT_EQ(inbound_count("redelivered"), 0);
}

TEST_F(messaging, an_unacked_message_is_redelivered_with_the_same_id_and_a_late_ack_still_counts) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  inject_ok(channel, {{"text", "are you there"}});
  auto first = c->next_push("chat.message", channel);
  ASSERT_TRUE(first);
  // No ack: after ack_timeout_s (1 s) it comes again, same message_id, another packet_id.
  auto second = c->next_push("chat.message", channel, 5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(payload_of(*second).at("message_id"), payload_of(*first).at("message_id"));
  EXPECT_NE(second->at("packet_id"), first->at("packet_id"));
  accept(*c, channel, *first);  // the earlier transmission's ack ends it
  EXPECT_TRUE(wait_inbound("pending", 0));
  EXPECT_GE(inbound_count("redelivered"), 1);
}

TEST_F(messaging, a_retryable_rejection_brings_it_back_and_a_final_one_ends_it_as_failed) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  inject_ok(channel, {{"text", "try again"}});
  auto m = c->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  ack(*c, channel, *m, {{"status", "rejected"}, {"code", "channel_busy"}, {"retryable", true}});
  auto again = c->next_push("chat.message", channel, 5s);
  ASSERT_TRUE(again);
  EXPECT_EQ(payload_of(*again).at("message_id"), payload_of(*m).at("message_id"));
  ack(*c, channel, *again, {{"status", "rejected"}, {"code", "permission_denied"}, {"retryable", false}});
  EXPECT_TRUE(wait_inbound("rejected", 1));
  EXPECT_EQ(inbound_count("pending"), 0);
  EXPECT_FALSE(c->next_push("chat.message", channel, 1500ms)) << "a final rejection is never redelivered";
}

TEST_F(messaging, a_malformed_ack_is_an_invalid_packet_and_an_unknown_id_is_ignored) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  auto bad = c->request("chat.message.ack", {{"message_id", "msg_x"}, {"status", "rejected"}}, channel);
  ASSERT_TRUE(bad);
  EXPECT_EQ(error_code(*bad), "invalid_packet");
  bad = c->request("chat.message.ack", {{"message_id", "msg_x"}, {"status", "maybe"}}, channel);
  ASSERT_TRUE(bad);
  EXPECT_EQ(error_code(*bad), "invalid_packet");
  c->send("chat.message.ack", {{"message_id", "msg_unknown"}, {"status", "accepted"}}, channel);
  auto pong = c->request("ping", {});
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->at("type"), "pong");
}

TEST_F(messaging, context_only_messages_ride_with_the_next_triggering_message_in_order) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  inject_ok(channel, {{"text", "first aside"}, {"trigger", false}, {"sender_name", "Bo"}, {"sender_id", "b"}});
  inject_ok(channel, {{"text", "my own words"}, {"role", "self"}, {"sender_name", "Me"}});
  EXPECT_FALSE(c->next_push("chat.message", channel, 300ms)) << "context alone is never sent";
  inject_ok(channel, {{"text", "raw question"}, {"context_text", "Cy asks: the question"}, {"sender_name", "Cy"}});
  auto m = c->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  auto context = p.at("context").as_array();
  ASSERT_EQ(context.size(), 2u) << p;
  EXPECT_EQ(context[0].at("text"), "first aside");
  EXPECT_EQ(context[0].at("sender_name"), "Bo");
  EXPECT_EQ(context[1].at("text"), "my own words");
  auto text = text_of(p, "text");
  EXPECT_NE(text.find("Bo: first aside\nMe: my own words\n"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("Cy asks: the question")) << "context_text is what the model reads: " << text;
  EXPECT_EQ(inbound_count("pending"), 3);
  accept(*c, channel, *m);
  EXPECT_TRUE(wait_inbound("pending", 0)) << "the context leaves with the message it rode on";
}

TEST_F(messaging, a_repeated_msg_id_is_delivered_once) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  inject_ok(channel, {{"text", "once"}, {"msg_id", "platform-42"}});
  auto r = inject(channel, {{"text", "once"}, {"msg_id", "platform-42"}});
  ASSERT_EQ(r.status, 202);
  EXPECT_EQ(r.json().at("duplicate"), json::value(true)) << r.body;
  auto m = c->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  accept(*c, channel, *m);
  EXPECT_TRUE(wait_inbound("pending", 0));
  r = inject(channel, {{"text", "once"}, {"msg_id", "platform-42"}});  // also after the ack
  EXPECT_EQ(r.json().at("duplicate"), json::value(true)) << r.body;
  EXPECT_FALSE(c->next_push("chat.message", channel, 300ms));
  EXPECT_EQ(inbound_count("duplicates"), 2);
}

TEST_F(messaging, a_bad_emit_is_refused_with_the_field_and_nothing_is_stored) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  struct bad {
    json::object emit;
    std::string field;
  };
  std::vector<bad> cases = {
      {{{"sender_id", "u"}}, "text"},
      {{{"text", ""}}, "text"},
      {{{"text", 5}}, "text"},
      {{{"text", std::string(70000, 'x')}}, "text"},
      {{{"text", "x"}, {"channel_key", "other/group/1"}}, "channel_key"},
      {{{"text", "x"}, {"channel_key", "echo/Bad Kind/1"}}, "channel_key"},
      {{{"text", "x"}, {"at", -1}}, "at"},
      {{{"text", "x"}, {"trigger", "no"}}, "trigger"},
      {{{"text", "x"}, {"modality", "video"}}, "modality"},
      {{{"text", "x"}, {"sender_name", "a\nb"}}, "sender_name"},
      {{{"text", "x"}, {"surprise", 1}}, "surprise"},
      {{{"text", "x"}, {"msg_id", std::string(300, 'm')}}, "msg_id"},
  };
  for (const auto& b : cases) {
    auto r = inject(channel, b.emit);
    EXPECT_EQ(r.status, 400) << json::serialize(b.emit);
    auto e = r.json();
    ASSERT_TRUE(e.is_object()) << r.body;
    EXPECT_EQ(e.at("error").at("code"), "invalid_message") << r.body;
    EXPECT_TRUE(text_of(e.at("error").as_object(), "message").starts_with(b.field)) << r.body;
  }
  auto r = inject("cch_NoSuchChannel000000000", {{"text", "x"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json().at("error").at("code"), "channel_not_found");
  r = http_call(server.port(), "POST", "/connectors/echo/inject", auth(), "{not json");
  EXPECT_EQ(r.status, 400);
  r = http_call(server.port(), "POST", "/connectors/echo/inject", {}, "{}");
  EXPECT_EQ(r.status, 401) << "the route needs the key";
  r = http_call(server.port(), "GET", "/connectors/echo/inject", auth());
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(inbound_count("pending"), 0);
  EXPECT_EQ(inbound_count("refused"), static_cast<std::int64_t>(cases.size()) + 1);
  EXPECT_FALSE(c->next_push("chat.message", channel, 200ms));
}

TEST_F(messaging, a_v1_socket_gets_message_push_with_the_im_v1_fields) {
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"supported_profiles", json::array{"xagent.im.v1"}}});
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  ASSERT_FALSE(channel.empty());
  inject_ok(channel, {{"text", "legacy hi"}, {"sender_id", "w1"}, {"sender_name", "Wu"},
                      {"channel_key", "echo/p2p/w1"}});
  auto m = c->next_push("message.push", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(p.at("provider"), "echo");
  EXPECT_EQ(p.at("profile"), "xagent.im.v1");
  EXPECT_EQ(p.at("event_kind"), "im.message.received");
  EXPECT_TRUE(is_random_id(text_of(p, "message_id"), "msg_"));
  EXPECT_EQ(p.at("sender_id"), "w1");
  EXPECT_EQ(p.at("display_name"), "Wu");
  EXPECT_EQ(p.at("chat_type"), "p2p");
  EXPECT_EQ(p.at("message_type"), "text");
  EXPECT_EQ(p.at("raw_text"), "legacy hi");
  EXPECT_EQ(p.at("text"), "legacy hi");
  // v1 has no business ack: written to the socket is delivered.
  EXPECT_TRUE(wait_inbound("pending", 0));
  EXPECT_EQ(inbound_count("delivered"), 1);
  // IM v2 packets on this socket are dropped without an answer.
  c->send("chat.activity", {{"status", "thinking"}}, channel);
  auto pong = c->request("ping", {});
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->at("type"), "pong");
}

TEST_F(messaging, nothing_goes_to_a_closed_channel_and_the_queue_drains_in_order_when_it_is_reopened) {
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    auto closed = c->request("channel.close", {}, channel);
    ASSERT_TRUE(closed);
    for (int i = 1; i <= 5; ++i) inject_ok(channel, {{"text", "queued #" + std::to_string(i)}});
    EXPECT_FALSE(c->next_push("chat.message", channel, 300ms));
  }
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  for (int i = 1; i <= 5; ++i) {
    auto m = c->next_push("chat.message", channel);
    ASSERT_TRUE(m) << i;
    EXPECT_EQ(text_of(payload_of(*m), "text"), "queued #" + std::to_string(i));
    accept(*c, channel, *m);
  }
  EXPECT_TRUE(wait_inbound("pending", 0));
}

TEST_F(messaging, echo_send_message_gets_an_answer_from_the_far_side) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  auto r = c->invoke(channel, "echo_send_message", {{"text", "ping the peer"}}, {{"tool_call_id", "call_peer_1"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(error_code(*r), "");
  auto m = c->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "text"), "ping the peer");
  EXPECT_EQ(p.at("sender").at("id"), "echo-peer");
  accept(*c, channel, *m);
}

TEST_F(messaging, a_burst_arrives_complete_in_order_and_within_the_window) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  auto r = c->invoke(channel, "echo_burst", {{"count", 200}, {"text", "b"}}, {{"tool_call_id", "call_burst_1"}},
                     30s);
  ASSERT_TRUE(r);
  ASSERT_EQ(error_code(*r), "") << json::serialize(*r);
  EXPECT_EQ(payload_of(*r).at("result").at("count"), json::value(200));
  // Without acks, at most delivery.window (32) are in flight.
  std::vector<json::object> first;
  while (auto m = c->next_push("chat.message", channel, 500ms)) first.push_back(*m);
  EXPECT_EQ(first.size(), 32u);
  int next = 1;
  for (const auto& m : first) {
    EXPECT_EQ(text_of(payload_of(m), "text"), "b #" + std::to_string(next++));
    accept(*c, channel, m);
  }
  while (next <= 200) {
    auto m = c->next_push("chat.message", channel);
    ASSERT_TRUE(m) << next;
    ASSERT_EQ(text_of(payload_of(*m), "text"), "b #" + std::to_string(next++));
    accept(*c, channel, *m);
  }
  EXPECT_TRUE(wait_inbound("pending", 0));
  EXPECT_EQ(inbound_count("delivered"), 200);
}

TEST_F(messaging, health_and_metrics_show_the_inbound_counters) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  inject_ok(channel, {{"text", "count me"}});
  auto m = c->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  accept(*c, channel, *m);
  ASSERT_TRUE(wait_inbound("delivered", 1));
  auto metrics = http_get(server.port(), "/metrics", server.key());
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("xconn_inbound_delivered_total{plugin=\"echo\"} 1\n"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("# TYPE xconn_inbound_pending gauge"), std::string::npos);
  EXPECT_EQ(http_get(server.port(), "/metrics").status, 401);
}

}  // namespace
}  // namespace xconn::test
