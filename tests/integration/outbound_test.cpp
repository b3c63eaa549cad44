// Assistant output from xAgent to a plugin on the real server, through a real WebSocket client that validates every
// packet against the spec's schemas: finals and their acks, idempotency by message_id, live deltas, the chat
// limits, the plugin's failures as rejections, payload checks, activity as typing, packets of a profile the socket
// did not negotiate, and the /health counters (IM v2 §3, §5-§10; docs/protocol.md "Data plane", "Inbound messages",
// "Outbound messages", "Health").
//
// The fixture plugin relay (tests/plugins/fixtures/relay.cpp) records what reaches it; its tool relay_log reads it
// back. Its chat limits: 20 code points, 3 finals a minute per conversation; it edits live and shows typing.
#include "support/data_plane.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

const std::string relay_token = "tok-relay-1";
const std::string secret_thrown_text = "internal-detail-7f3a";  // what relay's send throws with

std::string repeat(std::string_view piece, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += piece;
  return s;
}

class outbound : public ::testing::Test {
 protected:
  outbound() : server({"relay.so"}, [](config& c) { c.delivery.send_timeout_s = 1; }) {}

  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "relay");
    ASSERT_TRUE(dp);
    channel = open_signed_in(*dp);
    ASSERT_FALSE(channel.empty());
  }
  void TearDown() override {
    dp.reset();  // validates what it received while the server still runs
    server.stop();
  }

  // A new channel signed in with relay_token; "" on failure.
  static std::string open_signed_in(dp_client& c) {
    auto id = c.open();
    if (id.empty()) return "";
    auto ack = c.auth_start(id, "relay_token", json::object{{"token", relay_token}});
    if (!ack || text_of(payload_of(*ack), "status") != "authenticated") {
      ADD_FAILURE() << "relay_token did not authenticate: " << (ack ? json::serialize(*ack) : "no answer");
      return "";
    }
    return id;
  }

  // Sends a final chat.message and returns its answer (an empty object when none came). When it is an ack, checks
  // what every ack must carry: reply_to (dp_client checks it), the channel and the message_id (IM v2 §7).
  json::object final_message(json::object payload, const std::string& on = "",
                             std::chrono::milliseconds deadline = 5s) {
    const std::string& ch = on.empty() ? channel : on;
    auto sent = dp->send("chat.message", payload, ch);
    auto answer = dp->answer(sent, deadline);
    if (!answer) return {};
    if (text_of(*answer, "type") == "chat.message.ack") {
      EXPECT_EQ(text_of(*answer, "connector_channel_id"), ch) << json::serialize(*answer);
      if (auto* id = payload.if_contains("message_id")) {
        EXPECT_EQ(payload_of(*answer).at("message_id"), *id) << json::serialize(*answer);
      }
    }
    return *answer;
  }
  json::object final_text(const std::string& message_id, const std::string& text, const std::string& on = "",
                          std::chrono::milliseconds deadline = 5s) {
    return final_message({{"message_id", message_id}, {"text", text}}, on, deadline);
  }

  // The ack's payload after checking it is a rejection with this code and retryable flag.
  static json::object expect_rejected(const json::object& answer, const std::string& code, bool retryable) {
    EXPECT_EQ(text_of(answer, "type"), "chat.message.ack") << json::serialize(answer);
    auto p = payload_of(answer);
    EXPECT_EQ(text_of(p, "status"), "rejected") << json::serialize(answer);
    EXPECT_EQ(text_of(p, "code"), code) << json::serialize(answer);
    auto* r = p.if_contains("retryable");
    EXPECT_TRUE(r && r->is_bool() && r->as_bool() == retryable) << json::serialize(answer);
    return p;
  }
  static void expect_accepted(const json::object& answer, const std::string& message_id) {
    EXPECT_EQ(text_of(answer, "type"), "chat.message.ack") << json::serialize(answer);
    auto p = payload_of(answer);
    EXPECT_EQ(text_of(p, "status"), "accepted") << json::serialize(answer);
    EXPECT_EQ(text_of(p, "external_key"), "relay-" + message_id) << json::serialize(answer);
    EXPECT_EQ(p.if_contains("verified") ? p.at("verified") : json::value(), json::value(true)) << json::serialize(answer);
  }

  // What relay saw on the channel: {"sends","updates","activities"}.
  json::object relay_log(const std::string& on = "") {
    auto ack = dp->invoke(on.empty() ? channel : on, "relay_log", {});
    if (!ack) return {};
    EXPECT_EQ(text_of(*ack, "type"), "tool.invoke.ack") << json::serialize(*ack);
    EXPECT_EQ(error_code(*ack), "") << json::serialize(*ack);
    auto p = payload_of(*ack);
    auto* r = p.if_contains("result");
    return r && r->is_object() ? r->as_object() : json::object{};
  }
  static const json::array& list(const json::object& log, const char* key) {
    static const json::array none;
    auto* v = log.if_contains(key);
    return v && v->is_array() ? v->as_array() : none;
  }
  // Reads relay_log until cond holds or the deadline passes; returns the last log read.
  json::object wait_log(const std::function<bool(const json::object&)>& cond, const std::string& on = "",
                        std::chrono::milliseconds deadline = 5s) {
    json::object log;
    wait_until([&] { return cond(log = relay_log(on)); }, deadline);
    return log;
  }

  // A ping's pong: every answer to a packet sent before it has been written by then (answers leave in order), so
  // what has not arrived with it is not coming.
  void sync() {
    auto pong = dp->request("ping");
    ASSERT_TRUE(pong);
    EXPECT_EQ(text_of(*pong, "type"), "pong");
  }
  // Whether anything answering this packet arrived (kept by the client, unclaimed).
  bool answered(dp_client& c, const json::object& packet) {
    return std::any_of(c.kept().begin(), c.kept().end(), [&](const json::object& p) {
      auto* r = p.if_contains("reply_to");
      return r && *r == packet.at("packet_id");
    });
  }

  json::object health() {
    auto r = http_get(server.port(), "/connectors/relay/health", server.key());
    EXPECT_EQ(r.status, 200) << r.body;
    auto v = r.json();
    return v.is_object() ? v.as_object() : json::object{};
  }

  server_fixture server;
  std::unique_ptr<dp_client> dp;
  std::string channel;
};

TEST_F(outbound, a_final_is_sent_once_a_repeat_is_duplicate_and_other_content_conflicts) {
  auto first = final_text("m1", "hello");
  expect_accepted(first, "m1");
  auto p = payload_of(first);
  EXPECT_EQ(text_of(p, "message_id"), "m1");

  auto log = relay_log();
  ASSERT_EQ(list(log, "sends").size(), 1u) << json::serialize(log);
  const auto& reply = list(log, "sends")[0].as_object();
  EXPECT_EQ(text_of(reply, "idempotency_key"), "m1");
  EXPECT_EQ(text_of(reply, "text"), "hello");
  EXPECT_EQ(text_of(reply, "channel_key"), "relay/group/default");

  auto again = final_text("m1", "hello");
  EXPECT_EQ(text_of(again, "type"), "chat.message.ack") << json::serialize(again);
  EXPECT_EQ(text_of(payload_of(again), "status"), "duplicate") << json::serialize(again);
  EXPECT_EQ(list(relay_log(), "sends").size(), 1u);

  expect_rejected(final_text("m1", "goodbye"), "message_id_conflict", false);
  EXPECT_EQ(list(relay_log(), "sends").size(), 1u);
}

TEST_F(outbound, deltas_edit_the_target_message_live_and_gaps_or_conflicts_are_invalid_sequence) {
  auto delta = [&](std::int64_t seq, const std::string& text) {
    return dp->send("chat.message.delta", {{"message_id", "m2"}, {"sequence", seq}, {"text", text}}, channel);
  };
  delta(1, "he");
  delta(2, "llo");
  auto log = wait_log([](const json::object& l) { return list(l, "updates").size() >= 2; });
  const auto& updates = list(log, "updates");
  ASSERT_EQ(updates.size(), 2u) << json::serialize(log);
  EXPECT_EQ(text_of(updates[0].as_object(), "message_id"), "m2");
  EXPECT_EQ(text_of(updates[0].as_object(), "text"), "he");
  EXPECT_EQ(text_of(updates[1].as_object(), "message_id"), "m2");
  EXPECT_EQ(text_of(updates[1].as_object(), "text"), "hello");

  // A retransmission is idempotent: no answer, no second update.
  auto repeated = delta(2, "llo");
  sync();
  EXPECT_FALSE(answered(*dp, repeated)) << "a repeated delta was answered";
  EXPECT_EQ(list(relay_log(), "updates").size(), 2u);

  auto gap = dp->answer(delta(4, "!"));
  ASSERT_TRUE(gap);
  EXPECT_EQ(text_of(*gap, "type"), "error");
  EXPECT_EQ(error_code(*gap), "invalid_sequence");
  auto conflict = dp->answer(delta(2, "LLO"));
  ASSERT_TRUE(conflict);
  EXPECT_EQ(text_of(*conflict, "type"), "error");
  EXPECT_EQ(error_code(*conflict), "invalid_sequence");
  EXPECT_EQ(list(relay_log(), "updates").size(), 2u);

  expect_accepted(final_text("m2", "hello"), "m2");
  log = relay_log();
  ASSERT_EQ(list(log, "sends").size(), 1u) << json::serialize(log);
  EXPECT_EQ(text_of(list(log, "sends")[0].as_object(), "text"), "hello");
  EXPECT_EQ(list(log, "updates").size(), 2u);
}

TEST_F(outbound, the_length_limit_counts_code_points) {
  auto over = expect_rejected(final_text("long", repeat("é", 21)), "message_too_long", false);
  EXPECT_EQ(text_of(over, "message_id"), "long");
  expect_accepted(final_text("fits", repeat("é", 20)), "fits");  // 40 bytes, 20 code points
  auto log = relay_log();
  ASSERT_EQ(list(log, "sends").size(), 1u) << json::serialize(log);
  EXPECT_EQ(text_of(list(log, "sends")[0].as_object(), "idempotency_key"), "fits");
}

TEST_F(outbound, the_fourth_final_in_a_minute_is_rate_limited) {
  for (int i = 1; i <= 3; ++i) expect_accepted(final_text("r" + std::to_string(i), "reply"), "r" + std::to_string(i));
  expect_rejected(final_text("r4", "reply"), "rate_limited", true);
  EXPECT_EQ(list(relay_log(), "sends").size(), 3u);
}

TEST_F(outbound, the_plugins_failures_become_rejections_with_their_retryable_flag) {
  auto busy = expect_rejected(final_text("f1", "retry:x"), "target_busy", true);
  EXPECT_EQ(text_of(busy, "message"), "busy");
  expect_rejected(final_text("f2", "hard:x"), "target_refused", false);
  expect_rejected(final_text("f3", "throw:x"), "send_failed", true);
  for (const auto& frame : dp->received())
    EXPECT_EQ(frame.find(secret_thrown_text), std::string::npos) << "the thrown text reached the wire: " << frame;

  auto started = steady::now();
  expect_rejected(final_text("f4", "hang:x", "", 10s), "send_timeout", true);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count();
  EXPECT_GE(took, 900);  // delivery.send_timeout_s = 1
  EXPECT_LT(took, 5000);

  expect_rejected(final_text("f5", "noresult:x"), "invalid_send_result", false);
  EXPECT_EQ(list(relay_log(), "sends").size(), 5u);  // each reached the plugin once

  // A retryable rejection is no completion: redelivering the same message_id and content tries the target again
  // (IM v2 §7, §9).
  expect_rejected(final_text("f1", "retry:x"), "target_busy", true);
  EXPECT_EQ(list(relay_log(), "sends").size(), 6u);
}

TEST_F(outbound, a_retryable_failure_eats_no_rate_quota) {
  // More retryable failures than the quota (3 a minute): had any of them counted, the third success would not fit.
  for (int i = 1; i <= 4; ++i) expect_rejected(final_text("b" + std::to_string(i), "retry:x"), "target_busy", true);
  expect_rejected(final_text("t1", "throw:x"), "send_failed", true);
  expect_rejected(final_text("h1", "hang:x", "", 10s), "send_timeout", true);
  for (int i = 1; i <= 3; ++i) expect_accepted(final_text("ok" + std::to_string(i), "fine"), "ok" + std::to_string(i));
  expect_rejected(final_text("ok4", "fine"), "rate_limited", true);
  EXPECT_EQ(list(relay_log(), "sends").size(), 9u);
}

TEST_F(outbound, files_and_payloads_are_checked_before_the_plugin_sees_them) {
  expect_rejected(final_message({{"message_id", "x1"}, {"files", json::array{{{"type", "image"}, {"file_ref", "file_nope"}}}}}),
                  "file_ref_not_found", false);
  expect_rejected(final_message({{"message_id", "x2"},
                                 {"text", "two"},
                                 {"files", json::array{{{"type", "image"}, {"file_ref", "file_a"}},
                                                       {{"type", "file"}, {"file_ref", "file_a"}}}}}),
                  "invalid_reply", false);
  expect_rejected(final_message({{"message_id", "x3"}, {"files", json::array{{{"type", "sticker"}, {"file_ref", "file_b"}}}}}),
                  "invalid_reply", false);
  expect_rejected(final_message({{"message_id", "x4"}, {"text", "hi"}, {"session_id", "ses_1"}}), "invalid_reply", false);

  auto no_id = final_message({{"text", "no id"}});
  EXPECT_EQ(text_of(no_id, "type"), "error") << json::serialize(no_id);
  EXPECT_EQ(error_code(no_id), "invalid_packet") << json::serialize(no_id);

  EXPECT_EQ(list(relay_log(), "sends").size(), 0u);
}

TEST_F(outbound, activity_shows_as_typing_is_cleared_by_the_first_delta_and_is_never_acked) {
  auto thinking = dp->send("chat.activity", {{"status", "thinking"}}, channel);
  auto log = wait_log([](const json::object& l) { return !list(l, "activities").empty(); });
  ASSERT_EQ(list(log, "activities").size(), 1u) << json::serialize(log);
  EXPECT_EQ(text_of(list(log, "activities")[0].as_object(), "status"), "thinking");

  auto tool = dp->send("chat.activity", {{"status", "tool"}, {"tool_name", "web_search"}}, channel);
  dp->send("chat.message.delta", {{"message_id", "m3"}, {"sequence", 1}, {"text", "Hi"}}, channel);
  log = wait_log([](const json::object& l) { return list(l, "activities").size() >= 3; });
  const auto& acts = list(log, "activities");
  ASSERT_EQ(acts.size(), 3u) << json::serialize(log);
  EXPECT_EQ(text_of(acts[1].as_object(), "status"), "tool");
  EXPECT_EQ(text_of(acts[1].as_object(), "tool_name"), "web_search");
  EXPECT_EQ(text_of(acts[2].as_object(), "status"), "idle");  // visible text replaces the indicator (IM v2 §8)
  EXPECT_EQ(list(log, "updates").size(), 1u);
  sync();
  EXPECT_FALSE(answered(*dp, thinking));
  EXPECT_FALSE(answered(*dp, tool));

  auto no_name = dp->request("chat.activity", {{"status", "tool"}}, channel);
  ASSERT_TRUE(no_name);
  EXPECT_EQ(text_of(*no_name, "type"), "error");
  EXPECT_EQ(error_code(*no_name), "invalid_packet");
  auto idle_named = dp->request("chat.activity", {{"status", "idle"}, {"tool_name", "web_search"}}, channel);
  ASSERT_TRUE(idle_named);
  EXPECT_EQ(text_of(*idle_named, "type"), "error");
  EXPECT_EQ(error_code(*idle_named), "invalid_packet");
  auto long_name = dp->request("chat.activity", {{"status", "tool"}, {"tool_name", std::string(257, 't')}}, channel);
  ASSERT_TRUE(long_name);
  EXPECT_EQ(error_code(*long_name), "invalid_packet");  // at most 256 bytes (IM v2 §8)
  EXPECT_EQ(list(relay_log(), "activities").size(), 3u);
}

TEST_F(outbound, a_final_clears_the_typing_indicator) {
  dp->send("chat.activity", {{"status", "thinking"}}, channel);
  wait_log([](const json::object& l) { return !list(l, "activities").empty(); });
  expect_accepted(final_text("m4", "done"), "m4");
  auto log = wait_log([](const json::object& l) { return list(l, "activities").size() >= 2; });
  const auto& acts = list(log, "activities");
  ASSERT_EQ(acts.size(), 2u) << json::serialize(log);
  EXPECT_EQ(text_of(acts[0].as_object(), "status"), "thinking");
  EXPECT_EQ(text_of(acts[1].as_object(), "status"), "idle");
  EXPECT_EQ(list(log, "sends").size(), 1u);
}

TEST_F(outbound, a_final_on_a_channel_never_signed_in_is_rejected) {
  auto unsigned_channel = dp->open();
  ASSERT_FALSE(unsigned_channel.empty());
  auto refused = dp->auth_start(unsigned_channel, "relay_token", json::object{{"token", "invalid"}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(text_of(payload_of(*refused), "status"), "failed") << json::serialize(*refused);
  EXPECT_EQ(error_code(*refused), "invalid_credentials") << json::serialize(*refused);
  expect_rejected(final_text("u1", "hello", unsigned_channel), "connection_not_authenticated", false);
  EXPECT_EQ(list(relay_log(), "sends").size(), 0u);
}

TEST_F(outbound, im_v2_packets_on_a_socket_that_negotiated_only_v1_are_dropped_silently_and_counted) {
  auto v1 = dp_client::connect(server.port(), server.key(), "relay",
                               {{"supported_profiles", json::array{"xagent.im.v1"}}});
  ASSERT_TRUE(v1);
  // Signed in, so that a final that got through would reach the plugin.
  auto ch = open_signed_in(*v1);
  ASSERT_FALSE(ch.empty());
  auto before = v1->received().size();
  auto final_packet = v1->send("chat.message", {{"message_id", "v1m"}, {"text", "hello"}}, ch);
  auto delta_packet = v1->send("chat.message.delta", {{"message_id", "v1m"}, {"sequence", 1}, {"text", "he"}}, ch);
  auto activity_packet = v1->send("chat.activity", {{"status", "thinking"}}, ch);
  auto pong = v1->request("ping");
  ASSERT_TRUE(pong);
  EXPECT_EQ(text_of(*pong, "type"), "pong");
  // Nothing but the pong answered them (a descriptor push of the sign-in may come along): an answer to any of the
  // three would have left before the pong.
  for (auto i = before; i < v1->received().size(); ++i) {
    auto frame = json::parse(v1->received()[i]).as_object();
    auto type = text_of(frame, "type");
    EXPECT_TRUE(type == "pong" || type == "connection.descriptor.push") << v1->received()[i];
  }
  EXPECT_FALSE(answered(*v1, final_packet));
  EXPECT_FALSE(answered(*v1, delta_packet));
  EXPECT_FALSE(answered(*v1, activity_packet));

  auto metrics = http_get(server.port(), "/metrics", server.key());
  ASSERT_EQ(metrics.status, 200) << metrics.body;
  const std::string name = "\nxconn_packets_dropped_total ";
  auto at = metrics.body.find(name);
  ASSERT_NE(at, std::string::npos) << metrics.body;
  EXPECT_GE(std::stoll(metrics.body.substr(at + name.size())), 3) << metrics.body;

  // Nothing reached the plugin: read its log from the v2 socket, which takes the channel's route over.
  ASSERT_EQ(dp->open(ch), ch);
  auto log = relay_log(ch);
  EXPECT_TRUE(list(log, "sends").empty()) << json::serialize(log);
  EXPECT_TRUE(list(log, "updates").empty()) << json::serialize(log);
  EXPECT_TRUE(list(log, "activities").empty()) << json::serialize(log);
}

TEST_F(outbound, health_counts_finals_and_their_outcomes) {
  expect_accepted(final_text("h1", "hello"), "h1");
  EXPECT_EQ(text_of(payload_of(final_text("h1", "hello")), "status"), "duplicate");
  expect_rejected(final_text("h1", "other"), "message_id_conflict", false);
  expect_rejected(final_text("h2", "retry:x"), "target_busy", true);
  expect_rejected(final_text("h3", repeat("é", 21)), "message_too_long", false);
  dp->send("chat.message.delta", {{"message_id", "h4"}, {"sequence", 1}, {"text", "a"}}, channel);
  dp->send("chat.message.delta", {{"message_id", "h4"}, {"sequence", 2}, {"text", "b"}}, channel);
  dp->send("chat.activity", {{"status", "thinking"}}, channel);
  sync();

  auto h = health();
  ASSERT_TRUE(h.contains("outbound") && h.at("outbound").is_object()) << json::serialize(h);
  const auto& out = h.at("outbound").as_object();
  auto count = [&](const char* key) {
    auto* v = out.if_contains(key);
    return v && v->is_number() ? v->to_number<std::int64_t>() : -1;
  };
  EXPECT_EQ(count("finals"), 5) << json::serialize(out);
  EXPECT_EQ(count("accepted"), 1) << json::serialize(out);
  EXPECT_EQ(count("duplicates"), 1) << json::serialize(out);
  EXPECT_EQ(count("rejected"), 3) << json::serialize(out);
  EXPECT_EQ(count("finals"), count("accepted") + count("duplicates") + count("rejected")) << json::serialize(out);
  EXPECT_EQ(count("deltas"), 2) << json::serialize(out);
  EXPECT_EQ(count("activities"), 1) << json::serialize(out);
}

TEST_F(outbound, a_sent_file_carries_a_signed_download_url_its_receiver_can_fetch_without_the_key) {
  const std::string bytes = "bytes the target's receiver fetches";
  auto up = http_call(server.port(), "POST", "/connectors/relay/files/uploads",
                      {{"Authorization", "Bearer " + server.key()}, {"X-XAgent-Connector-Channel-ID", channel},
                       {"Content-Type", multipart_type()}},
                      multipart({file_part(bytes, "note.txt", "text/plain")}));
  ASSERT_EQ(up.status, 201) << up.body;
  auto ref = json::value_to<std::string>(up.json().at("file_ref"));
  expect_accepted(final_message({{"message_id", "with-file"}, {"text", "see"},
                                 {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}}),
                  "with-file");
  auto log = wait_log([](const json::object& l) { return !list(l, "sends").empty(); });
  ASSERT_EQ(list(log, "sends").size(), 1u);
  const auto& files = list(list(log, "sends")[0].as_object(), "files");
  ASSERT_EQ(files.size(), 1u);
  const auto& item = files[0].as_object();
  EXPECT_EQ(text_of(item, "file_ref"), ref);
  EXPECT_EQ(text_of(item, "mime_type"), "text/plain");
  auto url = parse_url(text_of(item, "download_url"));
  ASSERT_TRUE(url.ok) << json::serialize(item);
  EXPECT_EQ(url.origin, "http://127.0.0.1:" + std::to_string(server.port()));
  auto fetched = http_call(server.port(), "GET", url.target());
  EXPECT_EQ(fetched.status, 200);
  EXPECT_EQ(fetched.body, bytes);
}

TEST_F(outbound, a_reply_after_a_restart_goes_to_the_conversation_of_the_message_it_answers_with_the_targets_msg_id) {
  auto emitted = http_call(server.port(), "POST", "/connectors/relay/emit/" + channel,
                           {{"Authorization", "Bearer " + server.key()}},
                           json::serialize(json::object{{"text", "where is it?"}, {"msg_id", "t-77"},
                                                        {"channel_key", "relay/dm/u9"}, {"sender_id", "u9"},
                                                        {"sender_name", "Nia"}, {"role", "viewer"}}));
  ASSERT_EQ(emitted.status, 202) << emitted.body;
  auto pushed = dp->next_push("chat.message", channel);
  ASSERT_TRUE(pushed);
  dp->send("chat.message.ack", {{"message_id", payload_of(*pushed).at("message_id")}, {"status", "accepted"}}, channel);
  auto connector_id = dp->connector_id();
  // The ack is settled before the restart: nothing is redelivered to stand in for the durable record.
  ASSERT_TRUE(wait_until([&] {
    auto h = http_get(server.port(), "/connectors/relay/health", server.key()).json();
    return h.is_object() && h.at("inbound").at("pending").to_number<int>() == 0;
  }));
  dp.reset();
  server.stop();
  server.start();
  dp = dp_client::connect(server.port(), server.key(), "relay", {{"connector_id", connector_id}});
  ASSERT_TRUE(dp);
  ASSERT_TRUE(dp->open_channel(channel));
  expect_accepted(final_text("after-restart", "here"), "after-restart");
  auto log = wait_log([](const json::object& l) { return !list(l, "sends").empty(); });
  ASSERT_EQ(list(log, "sends").size(), 1u);
  const auto& reply = list(log, "sends")[0].as_object();
  EXPECT_EQ(text_of(reply, "channel_key"), "relay/dm/u9") << json::serialize(reply);
  auto reply_to = reply.at("reply_to").as_object();
  EXPECT_EQ(text_of(reply_to, "id"), "t-77");
  EXPECT_EQ(text_of(reply_to, "sender_name"), "Nia");
  EXPECT_EQ(text_of(reply_to, "role"), "viewer");
}

}  // namespace
}  // namespace xconn::test
