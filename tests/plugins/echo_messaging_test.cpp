// echo's messaging side through the C ABI alone, the way the host drives it: send and the sent log, activity,
// the /inject and /sent routes, and the emits of echo_send_message and echo_burst. The test host answers each
// emit as the test chooses: at once (inside xconn_host_emit) or later, from other threads.
#include "support/abi_test_host.hpp"
#include "support/test_support.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace json = boost::json;
using xconn::test::accepted;
using xconn::test::c_str;
using xconn::test::emitted;
using xconn::test::refused;
using xconn::test::test_call;
using xconn::test::test_host;
json::object object_of(std::string_view text) { return json::parse(text).as_object(); }

// The answer of one plugin route: {"status","content_type","body"}, with the body parsed.
struct http_reply {
  std::int64_t status = 0;
  json::object body;
};

class EchoMessaging : public xconn::test::plugin_test {
 protected:
  void SetUp() override { load("{}"); }

  // echo.so with this config, started.
  void load(std::string_view config) {
    plugin_test::load(xconn::test::plugin_dir() / "echo.so", config);
    if (HasFatalFailure()) return;
    test_call& start = start_call();
    ASSERT_TRUE(host_.wait(start));
    ASSERT_EQ(start.status, XCONN_STATUS_OK) << start.json;
  }

  // send's result; send always completes OK, with "ok" inside saying whether it was delivered.
  json::object send(std::string_view reply, std::string_view channel = "ch-1") {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_send(instance_, call.c_call(), c_str(channel), c_str(reply));
    EXPECT_TRUE(host_.wait(call)) << "send never answered";
    EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
    return call.status == XCONN_STATUS_OK && call.completions ? call.result() : json::object{};
  }

  test_call& http_call(std::string_view method, std::string_view path, std::string_view body = "") {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_http(instance_, call.c_call(), c_str(method), c_str(path), c_str(""), c_str(body));
    return call;
  }

  http_reply reply_of(const test_call& call) {
    EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
    if (call.status != XCONN_STATUS_OK || call.completions == 0) return {};
    json::object answer = call.result();
    EXPECT_EQ(answer.at("content_type").as_string(), "application/json");
    return {answer.at("status").as_int64(), json::parse(answer.at("body").as_string()).as_object()};
  }

  http_reply http(std::string_view method, std::string_view path, std::string_view body = "") {
    test_call& call = http_call(method, path, body);
    EXPECT_TRUE(host_.wait(call)) << method << " " << path << " never answered";
    return reply_of(call);
  }

  json::array sent() {
    http_reply reply = http("GET", "/sent");
    EXPECT_EQ(reply.status, 200);
    return reply.body.contains("sent") ? reply.body.at("sent").as_array() : json::array{};
  }

  void expect_http_error(const http_reply& reply, std::int64_t status, std::string_view code) {
    EXPECT_EQ(reply.status, status) << json::serialize(reply.body);
    ASSERT_TRUE(reply.body.contains("error")) << json::serialize(reply.body);
    EXPECT_EQ(reply.body.at("error").at("code").as_string(), code);
    EXPECT_FALSE(reply.body.at("error").at("message").as_string().empty());
  }
};

// ---- POST /inject ----

TEST_F(EchoMessaging, InjectEmitsEveryFieldButTheChannelAndAnswers202) {
  const json::object fields = object_of(R"({"text":"hi there","channel_key":"echo/dm/u1","sender_id":"u1",
      "sender_name":"Uma","msg_id":"m-1","at":1790000000000,"trigger":true,"context_text":"before",
      "role":"member","modality":"voice"})");
  json::object body = fields;
  body["connector_channel_id"] = "ch-7";

  http_reply reply = http("POST", "/inject", json::serialize(body));
  EXPECT_EQ(reply.status, 202);
  EXPECT_EQ(reply.body, object_of(R"({"status":"accepted","message_id":"msg_1","duplicate":false})"));

  std::vector<emitted> emits = host_.emits();
  ASSERT_EQ(emits.size(), 1u);
  EXPECT_EQ(emits[0].channel, "ch-7");
  EXPECT_EQ(emits[0].message, fields);
}

TEST_F(EchoMessaging, InjectPassesFieldsUntouchedForTheHostToJudge) {
  http_reply reply = http("POST", "/inject", R"({"connector_channel_id":"ch-1","text":5,"planet":"mars","files":[]})");
  EXPECT_EQ(reply.status, 202);
  ASSERT_EQ(host_.emits().size(), 1u);
  EXPECT_EQ(host_.emits()[0].message, object_of(R"({"text":5,"planet":"mars"})"));
}

TEST_F(EchoMessaging, InjectReportsADuplicate) {
  host_.set_policy([](std::size_t) { return accepted("msg_first", true); });
  http_reply reply = http("POST", "/inject", R"({"connector_channel_id":"ch-1","text":"hi","msg_id":"m-1"})");
  EXPECT_EQ(reply.status, 202);
  EXPECT_EQ(reply.body, object_of(R"({"status":"accepted","message_id":"msg_first","duplicate":true})"));
}

TEST_F(EchoMessaging, InjectAnswersWhenTheEmitReportsFromAnotherThread) {
  host_.set_mode(test_host::emit_mode::held);
  test_call& call = http_call("POST", "/inject", R"({"connector_channel_id":"ch-1","text":"hi"})");
  EXPECT_FALSE(host_.done(call)) << "answered before the message was stored";
  ASSERT_EQ(host_.held(), 1u);
  host_.release();
  ASSERT_TRUE(host_.wait(call));
  EXPECT_EQ(reply_of(call).status, 202);
}

TEST_F(EchoMessaging, InjectRefusedByTheHostIs400WithItsCode) {
  host_.set_policy([](std::size_t) { return refused("invalid_message", "text: required"); });
  http_reply reply = http("POST", "/inject", R"({"connector_channel_id":"ch-1","sender_id":"u1"})");
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.body, object_of(R"({"error":{"code":"invalid_message","message":"text: required"}})"));
}

TEST_F(EchoMessaging, InjectRefusesABadBodyWithoutEmitting) {
  for (const char* body : {"not json", "[1,2]", "\"text\"", ""}) {
    expect_http_error(http("POST", "/inject", body), 400, "invalid_json");
  }
  for (const char* body : {R"({"text":"hi"})", R"({"connector_channel_id":"","text":"hi"})",
                           R"({"connector_channel_id":7,"text":"hi"})"}) {
    expect_http_error(http("POST", "/inject", body), 400, "invalid_request");
  }
  EXPECT_TRUE(host_.emits().empty());
}

TEST_F(EchoMessaging, InjectStoresAttachmentsThroughTheHostAndEmitsTheirRefs) {
  http_reply reply = http("POST", "/inject", R"({"connector_channel_id":"ch-1","text":"see",
      "files":[{"filename":"a.txt","mime_type":"text/plain","content_base64":"aGk="},
               {"filename":"b.bin","content_base64":"AAEC/w=="}]})");
  EXPECT_EQ(reply.status, 202) << json::serialize(reply.body);
  auto stored = host_.files();
  ASSERT_EQ(stored.size(), 2u);
  auto first = stored.begin(), second = std::next(first);
  EXPECT_EQ(first->second.bytes, "hi");
  EXPECT_EQ(first->second.filename, "a.txt");
  EXPECT_EQ(first->second.mime_type, "text/plain");
  EXPECT_EQ(second->second.bytes, std::string("\x00\x01\x02\xff", 4));
  auto emits = host_.emits();
  ASSERT_EQ(emits.size(), 1u);
  EXPECT_EQ(emits[0].message.at("files"),
            json::parse(R"([{"file_ref":")" + first->first + R"("},{"file_ref":")" + second->first + R"("}])"));
}

TEST_F(EchoMessaging, InjectRefusesAttachmentsThatAreNotBase64WithoutEmitting) {
  for (const char* content : {"aGk", "a$k=", "=aGk", "aGk=aGk="}) {
    http_reply reply = http("POST", "/inject", std::string(R"({"connector_channel_id":"ch-1","text":"see",
        "files":[{"filename":"a.txt","content_base64":")") + content + R"("}]})");
    expect_http_error(reply, 400, "invalid_request");
  }
  expect_http_error(http("POST", "/inject", R"({"connector_channel_id":"ch-1","text":"x","files":"a"})"), 400,
                    "invalid_request");
  EXPECT_TRUE(host_.emits().empty());
  EXPECT_TRUE(host_.files().empty());
}

TEST_F(EchoMessaging, UnknownRoutesAre404) {
  expect_http_error(http("GET", "/nope"), 404, "not_found");
  expect_http_error(http("GET", "/inject"), 404, "not_found");
  expect_http_error(http("POST", "/sent", "{}"), 404, "not_found");
}

// ---- send and GET /sent ----

TEST_F(EchoMessaging, SendDeliversAtOnceAndSentListsNewestLastOncePerKey) {
  // Two files of ch-1 in the host's store (through /inject), named by the second final below.
  ASSERT_EQ(http("POST", "/inject", R"({"connector_channel_id":"ch-1","text":"files",
      "files":[{"filename":"a.txt","content_base64":"aGk="},{"filename":"b.png","content_base64":"aGk="}]})").status,
            202);
  auto stored = host_.files();
  ASSERT_EQ(stored.size(), 2u);
  std::string f_1 = stored.begin()->first, f_2 = std::next(stored.begin())->first;
  std::int64_t before = unix_now_ms();
  EXPECT_EQ(send(R"({"idempotency_key":"msg_a","text":"first","files":[],"channel_key":"echo/group/default"})"),
            object_of(R"({"ok":true,"external_key":"echo-msg_a","verified":true})"));
  EXPECT_EQ(send(R"({"idempotency_key":"msg_b","text":"second","channel_key":"echo/dm/u1",
                    "files":[{"file_ref":")" + f_1 + R"(","type":"file","filename":"a.txt","mime_type":"text/plain",
                              "byte_size":2},
                             {"file_ref":")" + f_2 + R"(","type":"image","filename":"b.png","mime_type":"image/png",
                              "byte_size":2}],
                    "reply_to":{"id":"m-1","sender_id":"u1","sender_name":"Uma","role":"member"}})"),
            object_of(R"({"ok":true,"external_key":"echo-msg_b","verified":true})"));
  // The host's retry of a final it already sent: the same answer, nothing logged twice.
  EXPECT_EQ(send(R"({"idempotency_key":"msg_a","text":"first","files":[]})"),
            object_of(R"({"ok":true,"external_key":"echo-msg_a","verified":true})"));
  std::int64_t after = unix_now_ms();

  json::array log = sent();
  ASSERT_EQ(log.size(), 2u) << json::serialize(log);
  for (json::value& entry : log) {
    std::int64_t at = entry.as_object().at("at").as_int64();
    EXPECT_GE(at, before);
    EXPECT_LE(at, after);
    entry.as_object().erase("at");
  }
  EXPECT_EQ(json::value(log), json::parse(R"([{"message_id":"msg_a","text":"first","files":[]},
                                 {"message_id":"msg_b","text":"second","files":[")" + f_1 + R"(",")" + f_2 + R"("]}])"));
  EXPECT_EQ(host_.emits().size(), 1u) << "a send is outbound only: only the /inject above emitted";
}

TEST_F(EchoMessaging, SendNamingAFileItCannotReadFailsAndIsNotLogged) {
  auto result = send(R"({"idempotency_key":"msg_x","text":"t","files":[{"file_ref":"file_0000000000000000000000000000dead","type":"file"}]})");
  EXPECT_EQ(result.at("ok"), false);
  EXPECT_EQ(result.at("error"), "file_unreadable");
  EXPECT_TRUE(sent().empty());
}

TEST_F(EchoMessaging, SentIsEmptyAtFirst) {
  EXPECT_EQ(http("GET", "/sent").body, object_of(R"({"sent":[]})"));
}

TEST_F(EchoMessaging, MalformedReplyIsInvalidReplyAndNotLogged) {
  for (const char* reply : {"not json", "[]", "{}", R"({"idempotency_key":"","text":"x"})",
                            R"({"idempotency_key":5,"text":"x"})", R"({"idempotency_key":"k","text":5})",
                            R"({"idempotency_key":"k","text":"x","files":"f_1"})",
                            R"({"idempotency_key":"k","text":"x","files":["f_1"]})",
                            R"({"idempotency_key":"k","text":"x","files":[{"filename":"a.txt"}]})"}) {
    json::object result = send(reply);
    EXPECT_EQ(result.at("ok"), false) << reply;
    EXPECT_EQ(result.at("error"), "invalid_reply") << reply;
    EXPECT_EQ(result.at("retryable"), false) << reply;
  }
  EXPECT_TRUE(sent().empty());
}

TEST_F(EchoMessaging, SendsFromManyThreadsAreEachLoggedOnce) {
  constexpr int threads = 8;
  constexpr int per_thread = 50;
  std::vector<std::thread> senders;
  for (int t = 0; t < threads; ++t) {
    senders.emplace_back([this, t] {
      for (int i = 0; i < per_thread; ++i) {
        // Every key twice, the second time from another thread.
        int k = (t * per_thread + i) / 2;
        send(R"({"idempotency_key":"k)" + std::to_string(k) + R"(","text":"t"})");
      }
    });
  }
  for (auto& sender : senders) sender.join();
  json::array log = sent();
  EXPECT_EQ(log.size(), static_cast<std::size_t>(threads * per_thread / 2));
  std::set<std::string> keys;
  for (const json::value& entry : log) keys.emplace(entry.at("message_id").as_string());
  EXPECT_EQ(keys.size(), log.size());
}

class EchoSmallSentLog : public EchoMessaging {
 protected:
  void SetUp() override { load(R"({"config":{"sent_log_max":3}})"); }
};

TEST_F(EchoSmallSentLog, KeepsTheNewestSentLogMaxAndStillKnowsOlderKeys) {
  for (int i = 1; i <= 5; ++i) send(R"({"idempotency_key":"k)" + std::to_string(i) + R"(","text":"t"})");
  auto ids = [this] {
    std::vector<std::string> out;
    for (const json::value& entry : sent()) out.emplace_back(entry.at("message_id").as_string());
    return out;
  };
  EXPECT_EQ(ids(), (std::vector<std::string>{"k3", "k4", "k5"}));
  // k1 scrolled out of the log, but a late retry of it is still not a new final.
  EXPECT_EQ(send(R"({"idempotency_key":"k1","text":"t"})").at("ok"), true);
  EXPECT_EQ(ids(), (std::vector<std::string>{"k3", "k4", "k5"}));
}

// ---- activity ----

TEST_F(EchoMessaging, ActivityCompletesEmptyAndEmitsNothing) {
  for (auto [status, tool] : {std::pair{"thinking", ""}, std::pair{"tool", "echo_reverse"}, std::pair{"idle", ""}}) {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_activity(instance_, call.c_call(), c_str("ch-1"), c_str(status), c_str(tool));
    ASSERT_TRUE(host_.wait(call));
    EXPECT_EQ(call.status, XCONN_STATUS_OK);
    EXPECT_EQ(call.json, "{}");
  }
  EXPECT_TRUE(host_.emits().empty());
}

// ---- echo_send_message: the peer answers ----

TEST_F(EchoMessaging, SendMessageAnswersThenThePeerRepliesWithTheSameText) {
  host_.set_mode(test_host::emit_mode::held);
  test_call& call = invoke("echo_send_message", R"({"connector_channel_id":"ch-5","text":"hello 😀"})", "ch-5");
  ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  std::string message_id(call.result().at("message_id").as_string());

  std::vector<emitted> emits = host_.emits();
  ASSERT_EQ(emits.size(), 1u);
  EXPECT_EQ(emits[0].channel, "ch-5");
  json::object expected{{"text", "hello 😀"}, {"sender_id", "echo-peer"}, {"sender_name", "Echo peer"},
                        {"msg_id", "reply-" + message_id}};
  EXPECT_EQ(emits[0].message, expected);
  host_.release();
  EXPECT_TRUE(host_.logs().size() == 1u) << "only 'echo started'";
}

TEST_F(EchoMessaging, APeerReplyTheHostRefusesIsLoggedNotThrown) {
  host_.set_policy([](std::size_t) { return refused("channel_not_found", "no such channel"); });
  test_call& call = invoke("echo_send_message", R"({"text":"hello"})");
  EXPECT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  bool warned = false;
  for (const auto& [level, line] : host_.logs()) {
    if (level == XCONN_LOG_WARN && line.find("channel_not_found") != std::string::npos) warned = true;
  }
  EXPECT_TRUE(warned);
}

// ---- echo_burst ----

TEST_F(EchoMessaging, BurstEmitsEveryMessageAtOnceAndAnswersAfterTheLastReport) {
  host_.set_mode(test_host::emit_mode::held);
  test_call& call = invoke_call("echo_burst", R"({"connector_channel_id":"ch-2","count":1000,"text":"x"})", "ch-2");

  // All 1000 went out while none had been answered: the tool did not wait for one before the next.
  std::vector<emitted> emits = host_.emits();
  ASSERT_EQ(emits.size(), 1000u);
  EXPECT_EQ(host_.held(), 1000u);
  std::set<std::string> msg_ids;
  std::string call_prefix;
  for (std::size_t i = 0; i < emits.size(); ++i) {
    const json::object& message = emits[i].message;
    std::string n = std::to_string(i + 1);
    EXPECT_EQ(emits[i].channel, "ch-2");
    EXPECT_EQ(message.at("text").as_string(), "x #" + n);
    EXPECT_EQ(message.at("sender_id").as_string(), "echo-peer");
    EXPECT_EQ(message.at("sender_name").as_string(), "Echo peer");
    EXPECT_EQ(message.size(), 4u);
    std::string msg_id(message.at("msg_id").as_string());
    ASSERT_TRUE(msg_id.ends_with("-" + n)) << msg_id;
    std::string prefix = msg_id.substr(0, msg_id.size() - n.size() - 1);
    if (i == 0) call_prefix = prefix;
    EXPECT_EQ(prefix, call_prefix) << "one call id per burst";
    msg_ids.insert(msg_id);
  }
  EXPECT_EQ(msg_ids.size(), 1000u);
  EXPECT_FALSE(host_.done(call));

  host_.release(999, 4);  // four threads report at once
  EXPECT_FALSE(host_.done(call)) << "answered before the last emit reported";
  host_.release();
  ASSERT_TRUE(host_.wait(call));
  ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  EXPECT_EQ(call.result(), object_of(R"({"status":"sent","count":1000})"));

  // Another burst has its own call id.
  test_call& again = invoke_call("echo_burst", R"({"count":1,"text":"x"})", "ch-2");
  host_.release();
  ASSERT_TRUE(host_.wait(again));
  std::string other(host_.emits().back().message.at("msg_id").as_string());
  EXPECT_NE(other.substr(0, other.size() - 2), call_prefix);
}

TEST_F(EchoMessaging, BurstWithSynchronousReports) {
  test_call& call = invoke("echo_burst", R"({"count":3,"text":"y"})");
  ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  EXPECT_EQ(call.result(), object_of(R"({"status":"sent","count":3})"));
  ASSERT_EQ(host_.emits().size(), 3u);
  EXPECT_EQ(host_.emits()[2].message.at("text").as_string(), "y #3");
}

TEST_F(EchoMessaging, BurstWithFailedEmitsFailsRetryably) {
  host_.set_mode(test_host::emit_mode::held);
  host_.set_policy([](std::size_t i) {
    if (i == 3) return refused("store_failed", "disk full");
    if (i == 7) return refused("invalid_message", "text: over 65536 bytes");
    return accepted("msg_" + std::to_string(i));
  });
  test_call& call = invoke_call("echo_burst", R"({"count":10,"text":"z"})");
  host_.release(0, 3);
  ASSERT_TRUE(host_.wait(call));
  expect_error(call, "emit_failed", true);
  std::string message(call.result().at("message").as_string());
  EXPECT_TRUE(message.starts_with("2 of 10 emits failed: ")) << message;
  // Three threads report in any order: the first failure seen is either one.
  EXPECT_TRUE(message.ends_with("store_failed") || message.ends_with("invalid_message")) << message;
}

TEST_F(EchoMessaging, BurstRefusesBadArgumentsWithoutEmitting) {
  for (const char* args : {R"({"count":0,"text":"x"})", R"({"count":10001,"text":"x"})", R"({"count":5})",
                           R"({"count":"5","text":"x"})", R"({"count":1.5,"text":"x"})", R"({"text":"x"})",
                           R"({"count":5,"text":5})", "[]"}) {
    expect_error(invoke("echo_burst", args), "invalid_arguments");
  }
  EXPECT_TRUE(host_.emits().empty());
}

}  // namespace
