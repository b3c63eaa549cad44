// The webhook plugin (docs/adapters.md "webhook") on the real server: sign-in and its refusals, signed POSTs in through
// the public route (202 once durable, 401 for anything unsigned, stale or unknown, 400 naming the field, 413 past the
// limit, a replayed msg_id answered with its first message_id), finals out to a receiver on loopback that checks
// every signature (retries on 5xx, none on 4xx, a receiver that never answers), files as download URLs, the
// webhook_post tool, channels back after a restart, and the secret nowhere but the sealed store.
#include "support/data_plane.hpp"
#include "support/files_helpers.hpp"
#include "support/log_capture.hpp"
#include "support/server_fixture.hpp"
#include "support/webhook_receiver.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <set>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string secret = "planted-webhook-secret-7c1e9a55";

std::string in_path(const std::string& channel) { return "/connectors/webhook/in/" + channel; }

// One signed POST to a channel's inbound route; t_offset moves the signature's time.
http_reply post_in(unsigned short port, const std::string& channel, const std::string& body,
                   const std::string& with_secret = secret, std::int64_t t_offset = 0) {
  return http_call(port, "POST", in_path(channel),
                   {{"Content-Type", "application/json"},
                    {"X-Xconn-Signature", webhook_signature(with_secret, unix_now() + t_offset, body)}},
                   body);
}

// The counter name of the webhook plugin in /metrics (-1 when absent).
long long counted(unsigned short port, const std::string& key, const std::string& name) {
  auto metrics = http_get(port, "/metrics", key).body;
  auto line = "xconn_plugin_events_total{plugin=\"webhook\",name=\"" + name + "\"} ";
  auto at = metrics.find(line);
  return at == std::string::npos ? -1 : std::stoll(metrics.substr(at + line.size()));
}

class webhook : public ::testing::Test {
 protected:
  explicit webhook(const std::function<void(config&)>& tweak = {})
      : receiver(secret), server({"webhook.so"}, [&](config& c) {
          if (tweak) tweak(c);
        }) {}
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "webhook");
    ASSERT_TRUE(dp);
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  std::optional<json::object> sign_in(const std::string& channel, const std::string& url, const std::string& s) {
    return dp->auth_start(channel, "webhook_binding", json::object{{"outbound_url", url}, {"secret", s}});
  }
  std::string bound() { return dp->open_signed_in("webhook_binding", {{"outbound_url", receiver.url()}, {"secret", secret}}); }
  json::object next_message(const std::string& channel, std::chrono::milliseconds deadline = 10s) {
    auto m = dp->next_push("chat.message", channel, deadline);
    if (!m) return {};
    auto p = payload_of(*m);
    dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    return p;
  }

  webhook_receiver receiver;
  server_fixture server;
  std::unique_ptr<dp_client> dp;
};

TEST_F(webhook, a_sign_in_names_the_receivers_host_and_the_inbound_url_and_bad_input_is_refused) {
  auto channel = dp->open();
  auto ack = sign_in(channel, receiver.url("/hooks/xconn?team=ops"), secret);
  ASSERT_TRUE(ack);
  ASSERT_EQ(text_of(payload_of(*ack), "status"), "authenticated") << json::serialize(*ack);
  auto target = descriptor_in(*ack)["target"].as_object();
  EXPECT_EQ(text_of(target, "display_name"), "127.0.0.1:" + std::to_string(receiver.port()));
  EXPECT_EQ(text_of(target, "account_hint"),
            "http://127.0.0.1:" + std::to_string(server.port()) + "/connectors/webhook/in/" + channel);
  EXPECT_EQ(text_of(descriptor_in(*ack)["connection"].as_object(), "status"), "connected");

  // No port written, none shown; nothing is asked of a receiver at sign-in.
  auto other = sign_in(dp->open(), "https://hooks.example.com/in", secret);
  ASSERT_TRUE(other);
  EXPECT_EQ(text_of(descriptor_in(*other)["target"].as_object(), "display_name"), "hooks.example.com");

  auto refused = [&](const std::string& url, const std::string& s) {
    auto a = sign_in(dp->open(), url, s);
    return a ? error_code(*a) : std::string("no answer");
  };
  EXPECT_EQ(refused(receiver.url(), "fifteen-bytes!!"), "invalid_input");
  EXPECT_EQ(refused(receiver.url(), std::string(4097, 's')), "invalid_input");
  for (const char* url : {"ftp://127.0.0.1/x", "127.0.0.1:8080/x", "http://", "http://user:pw@host/x",
                          "http://host/a b", "javascript:alert(1)", "http://host:99999/"})
    EXPECT_EQ(refused(url, secret), "invalid_input") << url;
}

TEST_F(webhook, a_signed_post_is_answered_202_once_durable_and_arrives_as_a_chat_message) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  json::object body{{"text", "disk almost full on db-3"}, {"sender_id", "alertmanager"},
                    {"sender_name", "Alertmanager"}, {"msg_id", "alert-1"}, {"channel_key", "webhook/group/ops"},
                    {"at", 1767225600000}};
  auto r = post_in(server.port(), channel, json::serialize(body));
  ASSERT_EQ(r.status, 202) << r.body;
  auto message_id = json::value_to<std::string>(r.json().at("message_id"));
  EXPECT_TRUE(message_id.starts_with("msg_")) << r.body;

  auto p = next_message(channel);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(text_of(p, "message_id"), message_id);
  EXPECT_EQ(text_of(p, "text"), "disk almost full on db-3");
  EXPECT_EQ(text_of(p.at("sender").as_object(), "id"), "alertmanager");
  EXPECT_EQ(text_of(p.at("sender").as_object(), "name"), "Alertmanager");
  EXPECT_EQ(p.at("created_at").to_number<long long>(), 1767225600000);

  // context_text is what the model reads; trigger false waits for the next message as its context.
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"raw","context_text":"what the model reads"})").status, 202);
  EXPECT_EQ(text_of(next_message(channel), "text"), "what the model reads");
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"earlier line","trigger":false,"sender_name":"Bo"})").status, 202);
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"the question"})").status, 202);
  auto with_context = next_message(channel);
  ASSERT_TRUE(with_context.contains("context")) << json::serialize(with_context);
  EXPECT_EQ(with_context.at("context").as_array().at(0).at("text"), "earlier line");
}

TEST_F(webhook, unsigned_stale_future_and_foreign_requests_are_401_and_store_nothing) {
  auto channel = bound();
  auto other = bound();
  ASSERT_FALSE(channel.empty() || other.empty());
  const std::string body = R"({"text":"should never arrive","msg_id":"evil-1"})";
  auto in = [&](const std::map<std::string, std::string>& headers, const std::string& to) {
    return http_call(server.port(), "POST", in_path(to), headers, body);
  };
  auto signed_at = [&](std::int64_t t, const std::string& s = secret) {
    return std::map<std::string, std::string>{{"X-Xconn-Signature", webhook_signature(s, t, body)}};
  };
  std::vector<std::pair<std::string, http_reply>> refused{
      {"no signature", in({}, channel)},
      {"wrong secret", in(signed_at(unix_now(), secret + "x"), channel)},
      {"another body's signature", in({{"X-Xconn-Signature", webhook_signature(secret, unix_now(), body + " ")}}, channel)},
      {"301 s old", in(signed_at(unix_now() - 301), channel)},
      {"301 s ahead", in(signed_at(unix_now() + 301), channel)},
      {"malformed header", in({{"X-Xconn-Signature", "v1=abc,t=x"}}, channel)},
      {"unknown channel", in(signed_at(unix_now()), "cch_0000000000000000000000")},
      {"no channel at all", in(signed_at(unix_now()), "x")},
  };
  for (const auto& [why, r] : refused) {
    EXPECT_EQ(r.status, 401) << why << ": " << r.body;
    EXPECT_EQ(error_of(r), "unauthorized") << why;
  }
  // A signature made with another channel's secret does not open this one.
  auto foreign = http_call(server.port(), "POST", in_path(other),
                           {{"X-Xconn-Signature", webhook_signature("another-secret-0123456789", unix_now(), body)}}, body);
  EXPECT_EQ(foreign.status, 401);
  // Inside the window either side is fine.
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"from a slow clock"})", secret, -290).status, 202);
  auto p = next_message(channel);
  EXPECT_EQ(text_of(p, "text"), "from a slow clock") << "a refused request was stored";
  EXPECT_FALSE(dp->next_push("chat.message", "", 300ms));
  EXPECT_EQ(counted(server.port(), server.key(), "inbound_accepted"), 1);
  EXPECT_EQ(counted(server.port(), server.key(), "inbound_unauthorized"), 9);
  // The msg_id of a refused request was never taken.
  auto later = post_in(server.port(), channel, body);
  EXPECT_EQ(later.status, 202);
  EXPECT_EQ(text_of(next_message(channel), "text"), "should never arrive");
}

TEST_F(webhook, a_replayed_msg_id_is_answered_with_its_first_message_id_and_delivered_once) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  const std::string body = R"({"text":"deploy 42 finished","msg_id":"deploy-42"})";
  auto first = post_in(server.port(), channel, body);
  ASSERT_EQ(first.status, 202) << first.body;
  auto id = json::value_to<std::string>(first.json().at("message_id"));
  // The same request again (a sender that missed the answer), and signed anew a moment later.
  auto again = http_call(server.port(), "POST", in_path(channel),
                         {{"X-Xconn-Signature", webhook_signature(secret, unix_now(), body)}}, body);
  EXPECT_EQ(again.status, 202);
  EXPECT_EQ(again.json().at("message_id"), json::value(id));
  // Four senders at once with one new msg_id: one message, and every answer names it.
  const std::string burst = R"({"text":"burst","msg_id":"burst-1"})";
  std::vector<http_reply> answers(4);
  std::vector<std::thread> senders;
  for (auto& a : answers) senders.emplace_back([&] { a = post_in(server.port(), channel, burst); });
  for (auto& t : senders) t.join();
  std::set<std::string> burst_ids;
  for (const auto& a : answers) {
    EXPECT_EQ(a.status, 202) << a.body;
    burst_ids.insert(a.body);
  }
  EXPECT_EQ(burst_ids.size(), 1u) << "the answers named different messages";

  std::vector<std::string> texts;
  while (true) {
    auto p = next_message(channel, texts.size() < 2 ? 10s : 500ms);
    if (p.empty()) break;
    texts.push_back(text_of(p, "text"));
    if (texts.size() == 1) {
      EXPECT_EQ(text_of(p, "message_id"), id);
    }
  }
  EXPECT_EQ(texts, (std::vector<std::string>{"deploy 42 finished", "burst"}));
  // Without a msg_id every POST is a message of its own.
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"same"})").status, 202);
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"same"})").status, 202);
  EXPECT_FALSE(next_message(channel).empty());
  EXPECT_FALSE(next_message(channel).empty());
}

TEST_F(webhook, a_malformed_body_is_400_naming_the_field) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  std::vector<std::pair<std::string, std::string>> bad{
      {"not json", "body"},
      {"[1,2]", "body"},
      {"{}", "text"},
      {R"({"text":5})", "text"},
      {R"({"text":""})", "text"},
      {R"({"text":"x","at":"yesterday"})", "at"},
      {R"({"text":"x","at":-1})", "at"},
      {R"({"text":"x","trigger":"no"})", "trigger"},
      {R"({"text":"x","sender_id":7})", "sender_id"},
      {R"({"text":"x","msg_id":""})", "msg_id"},
      {R"({"text":"x","colour":"red"})", "colour"},
      {R"({"text":"x","channel_key":"telegram/group/1"})", "channel_key"},  // the host's own rule
      {R"({"text":"x","sender_name":")" + std::string(300, 'n') + R"("})", "sender_name"},
  };
  for (const auto& [body, field] : bad) {
    auto r = post_in(server.port(), channel, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
    auto error = r.json().is_object() ? r.json().at("error").as_object() : json::object{};
    EXPECT_EQ(text_of(error, "code"), "invalid_body") << r.body;
    EXPECT_EQ(text_of(error, "field"), field) << body;
    EXPECT_TRUE(text_of(error, "message").starts_with(field + ":")) << r.body;
  }
  EXPECT_FALSE(dp->next_push("chat.message", channel, 300ms));
}

// The adapters' rule for refused emits (docs/plugin-api.md "Refused emits"): what the host refuses as invalid is a
// final 4xx to the sender (sending it again cannot help), each time with an `error` event, never a 5xx that invites a
// retry; the channel goes on taking the next message. (A store failure is the 503 with Retry-After.)
TEST_F(webhook, a_message_the_host_refuses_is_a_final_400_each_time_with_an_error_event_and_the_next_is_taken) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  std::string long_text(70000, 't');  // over the host's 64 KiB of text, within policy.max_body_bytes
  auto refused = post_in(server.port(), channel, R"({"text":")" + long_text + R"(","msg_id":"m-refused"})");
  EXPECT_EQ(refused.status, 400) << refused.body.substr(0, 300);
  EXPECT_NE(refused.body.find("\"field\":\"text\""), std::string::npos) << refused.body.substr(0, 300);
  EXPECT_EQ(refused.body.find("ttttttttttttttttttttttttttttttt"), std::string::npos);
  // The same again gets the same answer: nothing of the first was kept as a replay.
  EXPECT_EQ(post_in(server.port(), channel, R"({"text":")" + long_text + R"(","msg_id":"m-refused"})").status, 400);

  auto taken = post_in(server.port(), channel, R"({"text":"the next one","msg_id":"m-next"})");
  EXPECT_EQ(taken.status, 202) << taken.body;
  EXPECT_EQ(text_of(next_message(channel), "text"), "the next one");
  auto events = http_get(server.port(), "/connectors/webhook/events?limit=1000", server.key()).json();
  std::size_t errors = 0;
  for (const auto& e : events.at("events").as_array())
    if (e.at("event_type") == "error" && e.at("payload").at("code") == "invalid_message") ++errors;
  EXPECT_EQ(errors, 2u) << json::serialize(events);
  EXPECT_EQ(counted(server.port(), server.key(), "inbound_bad_body"), 2);
}

TEST_F(webhook, a_body_over_one_mib_is_413) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  std::string big = R"({"text":")" + std::string(2u << 20, 'a') + R"("})";
  auto r = post_in(server.port(), channel, big);
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 200);
  EXPECT_FALSE(dp->next_push("chat.message", channel, 300ms));
}

class webhook_small_body : public webhook {
 protected:
  webhook_small_body()
      : webhook([](config& c) { c.connectors["webhook"].policy = {{"max_body_bytes", 1000}}; }) {}
};

TEST_F(webhook_small_body, policy_max_body_bytes_bounds_the_body) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto fits = R"({"text":")" + std::string(900, 'a') + R"("})";
  EXPECT_EQ(post_in(server.port(), channel, fits).status, 202);
  auto over = R"({"text":")" + std::string(1000, 'a') + R"("})";
  auto r = post_in(server.port(), channel, over);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(error_of(r), "payload_too_large");
}

TEST_F(webhook, a_final_is_one_signed_post_with_its_fields_and_its_reply_to) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto in = post_in(server.port(), channel,
                    R"({"text":"status?","sender_id":"u-7","sender_name":"Ann","channel_key":"webhook/direct/ann","msg_id":"q-1"})");
  ASSERT_EQ(in.status, 202);
  ASSERT_FALSE(next_message(channel).empty());

  auto ack = dp->request("chat.message", {{"message_id", "reply-1"}, {"text", "all green"}}, channel, 10s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  EXPECT_EQ(payload_of(*ack)["verified"], true);
  auto got = receiver.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].signature_ok) << got[0].headers["x-xconn-signature"];
  EXPECT_EQ(got[0].target, "/hook");
  EXPECT_EQ(got[0].headers["content-type"], "application/json");
  auto body = got[0].json();
  EXPECT_EQ(text_of(body, "message_id"), "reply-1");
  EXPECT_EQ(text_of(body, "text"), "all green");
  EXPECT_EQ(text_of(body, "channel_key"), "webhook/direct/ann");
  ASSERT_TRUE(body.contains("reply_to")) << got[0].body;
  auto to = body.at("reply_to").as_object();
  EXPECT_EQ(text_of(to, "id"), "q-1");  // the sender's own msg_id: what it can thread the answer under
  EXPECT_EQ(text_of(to, "sender_id"), "u-7");
  EXPECT_EQ(text_of(to, "sender_name"), "Ann");
  EXPECT_TRUE(body.at("files").as_array().empty());

  // A final longer than chat.max_length goes whole: a receiver has no length limit.
  std::string long_text(6000, 'x');
  auto long_ack = dp->request("chat.message", {{"message_id", "reply-long"}, {"text", long_text}}, channel, 10s);
  ASSERT_TRUE(long_ack);
  EXPECT_EQ(text_of(payload_of(*long_ack), "status"), "accepted") << json::serialize(*long_ack);
  ASSERT_EQ(receiver.count(), 2u);
  EXPECT_EQ(text_of(receiver.requests()[1].json(), "text"), long_text);
}

// A 5xx is an outage (adapters' shared rule): the final is refused retryable at once, the channel degraded, and a
// HEAD probe 1 s, then 2 s later finds the receiver again; the agent's resend goes out with the same message_id.
TEST_F(webhook, a_receiver_answering_500_is_probed_until_it_answers_and_the_resent_final_keeps_its_message_id) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  receiver.script({500, 500, 200});
  auto started = std::chrono::steady_clock::now();
  auto ack = dp->request("chat.message", {{"message_id", "retry-1"}, {"text", "eventually"}}, channel, 20s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "target_unreachable") << json::serialize(*ack);
  EXPECT_EQ(payload_of(*ack)["retryable"], true);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s) << "refused at once, not after the send budget";
  EXPECT_EQ(last_pushed_status(*dp, channel, "degraded", 5s), "degraded");
  EXPECT_EQ(last_pushed_status(*dp, channel, "connected", 10s), "connected");
  auto probes = receiver.requests("HEAD");
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_TRUE(probes[0].signature_ok);
  EXPECT_GE(probes[1].at - probes[0].at, 1900ms);
  auto again = dp->request("chat.message", {{"message_id", "retry-1"}, {"text", "eventually"}}, channel, 20s);
  ASSERT_TRUE(again);
  EXPECT_EQ(text_of(payload_of(*again), "status"), "accepted") << json::serialize(*again);
  auto got = receiver.requests("POST");
  ASSERT_EQ(got.size(), 2u);
  for (const auto& r : got) {
    EXPECT_TRUE(r.signature_ok);
    EXPECT_EQ(text_of(r.json(), "message_id"), "retry-1");
  }
  EXPECT_EQ(counted(server.port(), server.key(), "errors_5xx"), 1);
  EXPECT_EQ(counted(server.port(), server.key(), "probes"), 2);
}

TEST_F(webhook, a_4xx_is_a_final_refusal_without_a_retry) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  receiver.script({400});
  auto ack = dp->request("chat.message", {{"message_id", "refused-1"}, {"text", "no thanks"}}, channel, 10s);
  ASSERT_TRUE(ack);
  auto p = payload_of(*ack);
  EXPECT_EQ(text_of(p, "status"), "rejected") << json::serialize(*ack);
  EXPECT_EQ(text_of(p, "code"), "send_failed");
  EXPECT_EQ(p["retryable"], false);
  EXPECT_FALSE(wait_until([&] { return receiver.count() > 1; }, 1500ms)) << "a 4xx was tried again";
}

class webhook_short_budget : public webhook {
 protected:
  webhook_short_budget()
      : webhook([](config& c) {
          c.delivery.send_timeout_s = 6;
          c.connectors["webhook"].policy = {{"send_budget_s", 3}, {"attempt_timeout_s", 1}};
        }) {}
};

TEST_F(webhook_short_budget, a_receiver_that_never_answers_degrades_the_channel_until_a_probe_finds_it) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  receiver.script({0, 0});
  auto started = std::chrono::steady_clock::now();
  auto ack = dp->request("chat.message", {{"message_id", "silent-1"}, {"text", "anyone?"}}, channel, 15s);
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(ack);
  auto p = payload_of(*ack);
  EXPECT_EQ(text_of(p, "status"), "rejected") << json::serialize(*ack);
  EXPECT_EQ(text_of(p, "code"), "target_unreachable") << json::serialize(*ack);
  EXPECT_EQ(p["retryable"], true);
  EXPECT_LT(took, 3s) << "one attempt's timeout (1 s), not the send budget";
  EXPECT_EQ(last_pushed_status(*dp, channel, "degraded", 5s), "degraded");
  // Meanwhile a final is refused at once, without a POST.
  auto second = dp->request("chat.message", {{"message_id", "silent-2"}, {"text", "still?"}}, channel, 15s);
  ASSERT_TRUE(second);
  EXPECT_EQ(text_of(payload_of(*second), "code"), "target_unreachable") << json::serialize(*second);
  EXPECT_EQ(receiver.requests("POST").size(), 1u);
  // The first probe is held unanswered too; the next one is answered: connected by itself.
  EXPECT_EQ(last_pushed_status(*dp, channel, "connected", 10s), "connected");
  auto ok = dp->request("chat.message", {{"message_id", "silent-2"}, {"text", "back?"}}, channel, 15s);
  ASSERT_TRUE(ok);
  EXPECT_EQ(text_of(payload_of(*ok), "status"), "accepted") << json::serialize(*ok);
}

TEST_F(webhook_short_budget, a_refused_connection_fails_retryable) {
  auto port = free_loopback_port();
  auto channel = dp->open_signed_in("webhook_binding",
                                    {{"outbound_url", "http://127.0.0.1:" + std::to_string(port) + "/x"}, {"secret", secret}});
  ASSERT_FALSE(channel.empty());
  auto ack = dp->request("chat.message", {{"message_id", "nobody-1"}, {"text", "hello?"}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "target_unreachable") << json::serialize(*ack);
  EXPECT_EQ(payload_of(*ack)["retryable"], true);
  EXPECT_GE(counted(server.port(), server.key(), "errors_unreachable"), 1);
}

TEST_F(webhook, files_in_a_final_go_as_download_urls_that_serve_the_bytes) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  const std::string bytes = random_bytes(50000);
  auto up = http_call(server.port(), "POST", "/connectors/webhook/files/uploads",
                      {{"Authorization", "Bearer " + server.key()}, {"X-XAgent-Connector-Channel-ID", channel},
                       {"Content-Type", multipart_type()}},
                      multipart({file_part(bytes, "report.pdf", "application/pdf")}));
  ASSERT_EQ(up.status, 201) << up.body;
  auto ref = json::value_to<std::string>(up.json().at("file_ref"));
  auto ack = dp->request("chat.message",
                         {{"message_id", "with-file"}, {"text", "the report"},
                          {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                         channel, 10s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  ASSERT_EQ(receiver.count(), 1u);
  auto body = receiver.requests()[0].json();
  const auto& files = body.at("files").as_array();
  ASSERT_EQ(files.size(), 1u);
  auto item = files[0].as_object();
  EXPECT_EQ(text_of(item, "file_ref"), ref);
  EXPECT_EQ(text_of(item, "filename"), "report.pdf");
  EXPECT_EQ(text_of(item, "mime_type"), "application/pdf");
  EXPECT_EQ(item.at("byte_size").to_number<std::size_t>(), bytes.size());
  auto url = parse_url(text_of(item, "download_url"));
  ASSERT_TRUE(url.ok) << text_of(item, "download_url");
  EXPECT_TRUE(text_of(item, "download_url").starts_with("http://127.0.0.1:" + std::to_string(server.port()) + "/"));
  // The receiver fetches it with no key: the signed URL is enough.
  auto fetched = http_call(server.port(), "GET", url.target());
  EXPECT_EQ(fetched.status, 200);
  EXPECT_TRUE(fetched.body == bytes) << "the download served other bytes";
}

TEST_F(webhook, webhook_post_posts_once_per_tool_call_id_and_a_non_2xx_is_http_error) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  for (int i = 0; i < 2; ++i) {
    auto ack = dp->invoke(channel, "webhook_post", {{"text", "backup started"}}, {{"tool_call_id", "call-9"}});
    ASSERT_TRUE(ack);
    ASSERT_EQ(error_code(*ack), "") << json::serialize(*ack);
    auto result = payload_of(*ack)["result"].as_object();
    EXPECT_EQ(text_of(result, "status"), "sent");
    EXPECT_EQ(result.at("http_status"), 200);
  }
  ASSERT_EQ(receiver.count(), 1u);
  auto posted = receiver.requests()[0];
  EXPECT_TRUE(posted.signature_ok);
  EXPECT_EQ(text_of(posted.json(), "text"), "backup started");
  EXPECT_EQ(text_of(posted.json(), "message_id"), "call-9");

  receiver.script({503});
  auto failed = dp->invoke(channel, "webhook_post", {{"text", "second"}}, {{"tool_call_id", "call-10"}});
  ASSERT_TRUE(failed);
  EXPECT_EQ(error_code(*failed), "http_error") << json::serialize(*failed);
  EXPECT_NE(json::serialize(failed->at("error")).find("503"), std::string::npos) << json::serialize(*failed);
  EXPECT_EQ(receiver.requests("POST").size(), 2u) << "a tool call is tried once";
}

TEST_F(webhook, a_signed_out_channel_refuses_inbound_and_its_tool) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"before"})").status, 202);
  ASSERT_TRUE(dp->request("auth.logout", {}, channel));
  EXPECT_EQ(post_in(server.port(), channel, R"({"text":"after"})").status, 401);
  auto ack = dp->invoke(channel, "webhook_post", {{"text", "x"}});
  ASSERT_TRUE(ack);
  EXPECT_EQ(error_code(*ack), "connection_not_authenticated");
}

TEST_F(webhook, channels_come_back_after_a_restart_and_inbound_and_replays_still_work) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto connector_id = dp->connector_id();
  auto first = post_in(server.port(), channel, R"({"text":"before the restart","msg_id":"r-1"})");
  ASSERT_EQ(first.status, 202);
  ASSERT_FALSE(next_message(channel).empty());
  dp.reset();
  server.stop();
  server.start();
  dp = dp_client::connect(server.port(), server.key(), "webhook", {{"connector_id", connector_id}});
  ASSERT_TRUE(dp);
  ASSERT_TRUE(dp->open_channel(channel));
  EXPECT_TRUE(wait_until([&] {
    auto d = dp->get_descriptor(channel);
    return d && text_of(descriptor_in(*d)["connection"].as_object(), "status") == "connected";
  }, 10s));
  // The replay of a message from before the restart still names it, and is not delivered again.
  auto replay = post_in(server.port(), channel, R"({"text":"before the restart","msg_id":"r-1"})");
  EXPECT_EQ(replay.status, 202);
  EXPECT_EQ(replay.json().at("message_id"), first.json().at("message_id"));
  auto after = post_in(server.port(), channel, R"({"text":"after the restart","msg_id":"r-2"})");
  ASSERT_EQ(after.status, 202) << after.body;
  EXPECT_EQ(text_of(next_message(channel), "text"), "after the restart");
  EXPECT_FALSE(dp->next_push("chat.message", channel, 300ms));
  // And outbound goes to the same receiver with the same secret.
  auto ack = dp->request("chat.message", {{"message_id", "after-restart"}, {"text", "still here"}}, channel, 10s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  ASSERT_EQ(receiver.count(), 1u);
  EXPECT_TRUE(receiver.requests()[0].signature_ok);
}

// A new build taken by a hot reload restores the channel from its sealed secret: inbound and replays go on.
TEST_F(webhook, a_hot_reload_keeps_the_channel_signed_in_and_its_replays) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto first = post_in(server.port(), channel, R"({"text":"before the reload","msg_id":"h-1"})");
  ASSERT_EQ(first.status, 202);
  ASSERT_FALSE(next_message(channel).empty());
  auto generation = [&] {
    auto list = http_get(server.port(), "/connectors", server.key()).json();
    return list.is_object() ? list.at("connectors").as_array().at(0).at("generation").to_number<int>() : 0;
  };
  auto before = generation();
  ASSERT_EQ(http_call(server.port(), "POST", "/connectors/webhook/reload", {{"Authorization", "Bearer " + server.key()}}).status, 202);
  ASSERT_TRUE(wait_until([&] { return generation() > before; }, 15s));
  ASSERT_TRUE(wait_until([&] {
    auto d = dp->get_descriptor(channel);
    return d && text_of(descriptor_in(*d)["connection"].as_object(), "status") == "connected";
  }, 10s));
  // The descriptor already showed connected before the reload: the new build may still be restoring the channel's
  // secret (401 until then). A replay is idempotent, so it is simply sent again until the restore is done.
  http_reply replay;
  wait_until([&] {
    replay = post_in(server.port(), channel, R"({"text":"before the reload","msg_id":"h-1"})");
    return replay.status != 401;
  }, 10s);
  EXPECT_EQ(replay.status, 202) << replay.body;
  EXPECT_EQ(replay.body, first.body);
  ASSERT_EQ(post_in(server.port(), channel, R"({"text":"after the reload"})").status, 202);
  EXPECT_EQ(text_of(next_message(channel), "text"), "after the reload");
}

// An https:// receiver is verified: one whose certificate no trusted CA signed gets nothing (send_failed, retryable;
// the tool target_unreachable) unless config.ca_file names its CA; then finals arrive signed.
TEST(webhook_tls, an_https_receiver_is_refused_unless_config_ca_file_trusts_it) {
  webhook_receiver receiver(secret, true);
  for (bool trusted : {false, true}) {
    server_fixture server({"webhook.so"}, [&](config& c) {
      c.connectors["webhook"].policy = {{"send_budget_s", 2}, {"attempt_timeout_s", 1}};
      if (trusted) c.connectors["webhook"].config = {{"ca_file", receiver.ca_file()}};
    });
    server.start();
    auto dp = dp_client::connect(server.port(), server.key(), "webhook");
    ASSERT_TRUE(dp);
    auto channel = dp->open_signed_in("webhook_binding", {{"outbound_url", receiver.url()}, {"secret", secret}});
    ASSERT_FALSE(channel.empty());
    auto ack = dp->request("chat.message", {{"message_id", trusted ? "tls-ok" : "tls-refused"}, {"text", "over TLS"}}, channel, 10s);
    ASSERT_TRUE(ack);
    auto tool = dp->invoke(channel, "webhook_post", {{"text", "tool over TLS"}});
    ASSERT_TRUE(tool);
    if (trusted) {
      EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
      EXPECT_EQ(error_code(*tool), "") << json::serialize(*tool);
    } else {
      EXPECT_EQ(text_of(payload_of(*ack), "code"), "target_unreachable") << json::serialize(*ack);
      EXPECT_EQ(payload_of(*ack)["retryable"], true);
      EXPECT_EQ(error_code(*tool), "target_unreachable") << json::serialize(*tool);
    }
  }
  auto got = receiver.requests("POST");
  ASSERT_EQ(got.size(), 2u) << "an untrusted receiver got a request";
  EXPECT_TRUE(got[0].signature_ok);
  EXPECT_EQ(text_of(got[0].json(), "message_id"), "tls-ok");
}

TEST(webhook_secrets, the_secret_reaches_no_log_line_event_metric_descriptor_error_or_store_byte) {
  log_capture logs;
  webhook_receiver receiver(secret);
  std::optional<server_fixture> server(std::in_place, std::vector<std::string>{"webhook.so"},
                                       [](config& c) { c.connectors["webhook"].policy = {{"send_budget_s", 2}}; });
  server->start();
  std::vector<std::string> seen;
  {
    auto dp = dp_client::connect(server->port(), server->key(), "webhook");
    ASSERT_TRUE(dp);
    auto channel = dp->open_signed_in("webhook_binding", {{"outbound_url", receiver.url()}, {"secret", secret}});
    ASSERT_FALSE(channel.empty());
    // Refusals of every kind, a message in, finals out (taken, refused, failing).
    dp->auth_start(dp->open(), "webhook_binding", json::object{{"outbound_url", "ftp://x"}, {"secret", secret}});
    dp->auth_start(dp->open(), "webhook_binding", json::object{{"outbound_url", receiver.url()}, {"secret", "short"}});
    seen.push_back(post_in(server->port(), channel, R"({"text":"in"})", secret).body);
    seen.push_back(post_in(server->port(), channel, R"({"text":"in"})", secret + "!").body);
    seen.push_back(post_in(server->port(), channel, R"({"nope":1})", secret).body);
    auto m = dp->next_push("chat.message", channel, 10s);
    ASSERT_TRUE(m);
    receiver.script({200, 400, 500, 500, 500});
    for (std::string id : {"s-1", "s-2", "s-3"}) dp->request("chat.message", {{"message_id", id}, {"text", "out"}}, channel, 10s);
    dp->invoke(channel, "webhook_post", {{"text", "tool"}});
    for (const auto& text : dp->received()) EXPECT_EQ(text.find(secret), std::string::npos) << text;
    for (const auto& route : {"/metrics", "/connectors/webhook/events?limit=1000", "/connectors/webhook/health",
                              "/connectors/webhook/connector-card.json", "/connectors"}) {
      auto r = http_get(server->port(), route, server->key());
      EXPECT_EQ(r.status, 200) << route;
      EXPECT_EQ(r.body.find(secret), std::string::npos) << route;
    }
  }
  for (const auto& body : seen) EXPECT_EQ(body.find(secret), std::string::npos) << body;
  server->stop();
  auto store = read_file(server->dir().path() / "store" / "data.mdb");
  EXPECT_FALSE(store.empty());
  EXPECT_EQ(store.find(secret), std::string::npos) << "the secret is in the store in plain text";
  EXPECT_EQ(store.find("7c1e9a55"), std::string::npos);
  server.reset();
  EXPECT_EQ(logs.text().find(secret), std::string::npos);
  EXPECT_EQ(logs.text().find("7c1e9a55"), std::string::npos);
}

// Messages a second, end to end, both ways (docs/webhook.md reports them; measured here, never asserted):
// inbound, 2,000 signed POSTs from 4 and then 16 senders on kept connections → 202 → chat.message → ack; outbound, 2,000
// finals on 80 channels (the host's chat.max_per_minute of 30 per conversation) from four sockets → signed POST →
// the receiver's 200 → accepted.
TEST(webhook_rate, messages_per_second_both_ways) {
  webhook_receiver receiver(secret);
  server_fixture server({"webhook.so"});
  server.start();
  auto dp = dp_client::connect(server.port(), server.key(), "webhook");
  ASSERT_TRUE(dp);
  auto channel = dp->open_signed_in("webhook_binding", {{"outbound_url", receiver.url()}, {"secret", secret}});
  ASSERT_FALSE(channel.empty());

  // Inbound at two concurrencies: a POST is answered once its message is durable, so the senders at once bound it.
  constexpr int inbound = 2000;
  std::map<int, double> inbound_rate;
  for (int senders : {4, 16}) {
    std::atomic<int> accepted{0};
    auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int s = 0; s < senders; ++s)
      threads.emplace_back([&, s, senders] {
        keepalive_client client(server.port());
        for (int i = s; i < inbound; i += senders) {
          auto body = json::serialize(json::object{{"text", "m" + std::to_string(i)},
                                                   {"msg_id", "rate-" + std::to_string(senders) + "-" + std::to_string(i)}});
          auto r = client.post(in_path(channel), {{"X-Xconn-Signature", webhook_signature(secret, unix_now(), body)}}, body);
          if (r.status == 202) ++accepted;
        }
      });
    std::set<std::string> texts;
    while (static_cast<int>(texts.size()) < inbound) {
      auto m = dp->next_push("chat.message", channel, 10s);
      if (!m) break;
      auto p = payload_of(*m);
      dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
      texts.insert(text_of(p, "text"));
    }
    for (auto& t : threads) t.join();
    inbound_rate[senders] = inbound / std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_EQ(accepted.load(), inbound);
    ASSERT_EQ(static_cast<int>(texts.size()), inbound);
  }

  constexpr int sockets = 4, channels_per_socket = 20, finals_per_channel = 25;
  std::vector<std::unique_ptr<dp_client>> clients;
  std::vector<std::vector<std::string>> channels(sockets);
  for (int s = 0; s < sockets; ++s) {
    clients.push_back(dp_client::connect(server.port(), server.key(), "webhook"));
    ASSERT_TRUE(clients.back());
    for (int c = 0; c < channels_per_socket; ++c) {
      channels[s].push_back(clients[s]->open_signed_in("webhook_binding", {{"outbound_url", receiver.url()}, {"secret", secret}}));
      ASSERT_FALSE(channels[s].back().empty());
    }
  }
  std::atomic<int> delivered{0};
  auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int s = 0; s < sockets; ++s)
    threads.emplace_back([&, s] {
      std::vector<json::object> sent;
      for (int i = 0; i < finals_per_channel; ++i)
        for (const auto& ch : channels[s])
          sent.push_back(clients[s]->send("chat.message",
                                          {{"message_id", "out-" + ch + "-" + std::to_string(i)}, {"text", "reply " + std::to_string(i)}},
                                          ch));
      for (const auto& packet : sent) {
        auto ack = clients[s]->answer(packet, 30s);
        if (ack && text_of(payload_of(*ack), "status") == "accepted") ++delivered;
      }
    });
  for (auto& t : threads) t.join();
  double out_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  constexpr int outbound = sockets * channels_per_socket * finals_per_channel;
  EXPECT_EQ(delivered.load(), outbound);
  EXPECT_EQ(receiver.count(), static_cast<std::size_t>(outbound));
  RecordProperty("inbound_per_second_4_senders", static_cast<int>(inbound_rate[4]));
  RecordProperty("inbound_per_second_16_senders", static_cast<int>(inbound_rate[16]));
  RecordProperty("outbound_per_second", static_cast<int>(outbound / out_s));
  std::cout << "webhook inbound: " << inbound << " each, " << static_cast<int>(inbound_rate[4]) << "/s (4 senders), "
            << static_cast<int>(inbound_rate[16]) << "/s (16 senders); outbound: " << outbound << " in " << out_s
            << " s = " << static_cast<int>(outbound / out_s) << "/s\n";
}

}  // namespace
}  // namespace xconn::test
