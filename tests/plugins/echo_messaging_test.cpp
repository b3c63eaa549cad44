// echo's messaging side through the C ABI alone, the way the host drives it: send and the sent log, activity,
// the /inject and /sent routes, and the emits of echo_send_message and echo_burst. The test host answers each
// emit as the test chooses: at once (inside xconn_host_emit) or later, from other threads.
#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS 1
#endif

#include <xconn/plugin.h>

#include "support/test_support.hpp"

#include <boost/dll/shared_library.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace dll = boost::dll;
namespace json = boost::json;
using namespace std::chrono_literals;

xconn_str c_str(std::string_view s) { return {s.data(), s.size()}; }
std::string_view view(xconn_str s) { return {s.data, s.size}; }
json::object object_of(std::string_view text) { return json::parse(text).as_object(); }

class test_host;

struct test_call {
  explicit test_call(test_host* owner) : host(owner) {}

  test_host* host;
  int completions = 0;
  xconn_status status = XCONN_STATUS_OK;
  std::string json;  // of the first completion

  xconn_call* c_call() { return reinterpret_cast<xconn_call*>(this); }
  json::object result() const { return json::parse(json).as_object(); }
};

// What the host answers one emit with.
struct emit_answer {
  bool ok = true;
  std::string message_id;
  bool duplicate = false;
  std::string code;
  std::string message;
};

emit_answer accepted(std::string message_id, bool duplicate = false) {
  return {true, std::move(message_id), duplicate, "", ""};
}
emit_answer refused(std::string code, std::string message) {
  return {false, "", false, std::move(code), std::move(message)};
}

struct emitted {
  std::string channel;
  json::object message;
};

// A host whose emit records each message and answers it by policy, synchronously or when the test releases it.
class test_host {
 public:
  // held: emits wait until release(), which answers them from another thread.
  enum class emit_mode { sync, held };

  test_host()
      : api_{sizeof(xconn_host_api), XCONN_PLUGIN_API_MAJOR, XCONN_PLUGIN_API_MINOR, this, &log, &report_health,
             &complete, &emit} {}

  const xconn_host_api* api() const { return &api_; }

  test_call& new_call() {
    std::lock_guard lock(mutex_);
    return calls_.emplace_back(this);
  }

  bool wait(const test_call& call, std::chrono::milliseconds deadline = 10s) {
    std::unique_lock lock(mutex_);
    return completed_.wait_for(lock, deadline, [&] { return call.completions > 0; });
  }

  bool done(const test_call& call) {
    std::lock_guard lock(mutex_);
    return call.completions > 0;
  }

  void expect_each_call_completed_once() {
    std::lock_guard lock(mutex_);
    for (const auto& call : calls_) EXPECT_EQ(call.completions, 1) << call.json;
  }

  void set_mode(emit_mode mode) {
    std::lock_guard lock(mutex_);
    mode_ = mode;
  }

  // policy(i) answers the i-th emit (from 0); the default accepts each as msg_<i+1>.
  void set_policy(std::function<emit_answer(std::size_t)> policy) {
    std::lock_guard lock(mutex_);
    policy_ = std::move(policy);
  }

  std::vector<emitted> emits() {
    std::lock_guard lock(mutex_);
    return emits_;
  }

  std::size_t held() {
    std::lock_guard lock(mutex_);
    return held_.size();
  }

  // Answers the first n held emits (all when n is 0) from `threads` threads at once; returns when all ran.
  void release(std::size_t n = 0, unsigned threads = 1) {
    std::vector<pending> batch;
    {
      std::lock_guard lock(mutex_);
      if (n == 0 || n > held_.size()) n = held_.size();
      auto end = held_.begin() + static_cast<std::ptrdiff_t>(n);
      batch.assign(std::make_move_iterator(held_.begin()), std::make_move_iterator(end));
      held_.erase(held_.begin(), end);
    }
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&batch, t, threads] {
        for (std::size_t i = t; i < batch.size(); i += threads) answer(batch[i]);
      });
    }
    for (auto& worker : workers) worker.join();
  }

  std::vector<std::pair<xconn_log_level, std::string>> logs() {
    std::lock_guard lock(mutex_);
    return logs_;
  }

 private:
  struct pending {
    xconn_emit_done done;
    void* user;
    emit_answer answer;
  };

  static void answer(const pending& p) {
    xconn_emit_result r{sizeof(xconn_emit_result),
                        p.answer.ok ? XCONN_STATUS_OK : XCONN_STATUS_ERROR,
                        c_str(p.answer.message_id),
                        p.answer.duplicate ? 1 : 0,
                        c_str(p.answer.code),
                        c_str(p.answer.message)};
    p.done(p.user, &r);
  }

  static void log(void* ctx, xconn_log_level level, xconn_str text) {
    auto* self = static_cast<test_host*>(ctx);
    std::lock_guard lock(self->mutex_);
    self->logs_.emplace_back(level, std::string(view(text)));
  }

  static void report_health(void*, xconn_health, xconn_str) {}

  static void complete(xconn_call* c, xconn_status status, xconn_str result) {
    auto* call = reinterpret_cast<test_call*>(c);
    std::lock_guard lock(call->host->mutex_);
    if (call->completions++ == 0) {
      call->status = status;
      call->json.assign(view(result));
    }
    call->host->completed_.notify_all();
  }

  static void emit(void* ctx, xconn_str channel, xconn_str message, xconn_emit_done done, void* user) {
    auto* self = static_cast<test_host*>(ctx);
    pending p{done, user, {}};
    {
      std::lock_guard lock(self->mutex_);
      std::size_t index = self->emits_.size();
      self->emits_.push_back({std::string(view(channel)), json::parse(view(message)).as_object()});
      p.answer = self->policy_ ? self->policy_(index) : accepted("msg_" + std::to_string(index + 1));
      if (self->mode_ == emit_mode::held) {
        self->held_.push_back(std::move(p));
        return;
      }
    }
    answer(p);  // unlocked: the plugin may complete a call from inside its callback
  }

  xconn_host_api api_;
  std::mutex mutex_;
  std::condition_variable completed_;
  std::deque<test_call> calls_;  // a deque keeps the addresses the plugin holds
  std::vector<std::pair<xconn_log_level, std::string>> logs_;
  emit_mode mode_ = emit_mode::sync;
  std::function<emit_answer(std::size_t)> policy_;
  std::vector<emitted> emits_;
  std::vector<pending> held_;
};

// The answer of one plugin route: {"status","content_type","body"}, with the body parsed.
struct http_reply {
  std::int64_t status = 0;
  json::object body;
};

class EchoMessaging : public ::testing::Test {
 protected:
  void SetUp() override { load("{}"); }

  void load(std::string_view config) {
    lib_ = dll::shared_library(xconn::test::plugin_dir() / "echo.so",
                               dll::load_mode::rtld_local | dll::load_mode::rtld_now);
    api_ = lib_.get<const xconn_plugin_api*(uint32_t)>(XCONN_PLUGIN_ENTRY_SYMBOL)(XCONN_PLUGIN_API_MAJOR);
    ASSERT_NE(api_, nullptr);
    instance_ = api_->xconn_plugin_on_create(host_.api(), c_str(config));
    ASSERT_NE(instance_, nullptr);
    test_call& start = host_.new_call();
    api_->xconn_plugin_on_start(instance_, start.c_call());
    ASSERT_TRUE(host_.wait(start));
    ASSERT_EQ(start.status, XCONN_STATUS_OK) << start.json;
  }

  // A host answers every emit before it lets the plugin go.
  void TearDown() override {
    if (instance_ == nullptr) return;
    host_.release();
    test_call& stop = host_.new_call();
    api_->xconn_plugin_on_stop(instance_, stop.c_call());
    EXPECT_TRUE(host_.wait(stop));
    api_->xconn_plugin_on_destroy(instance_);
    host_.expect_each_call_completed_once();
  }

  test_call& invoke_call(std::string_view tool, std::string_view args, std::string_view channel = "ch-1") {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_invoke_tool(instance_, call.c_call(), c_str(channel), c_str(tool), c_str(args),
                                      c_str("{}"));
    return call;
  }

  test_call& invoke(std::string_view tool, std::string_view args, std::string_view channel = "ch-1") {
    test_call& call = invoke_call(tool, args, channel);
    EXPECT_TRUE(host_.wait(call)) << tool << " never answered";
    return call;
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

  void expect_error(const test_call& call, std::string_view code, bool retryable = false) {
    ASSERT_EQ(call.status, XCONN_STATUS_ERROR) << call.json;
    json::object error = call.result();
    EXPECT_EQ(error.at("code").as_string(), code) << call.json;
    EXPECT_EQ(error.at("retryable").as_bool(), retryable) << call.json;
    EXPECT_FALSE(error.at("message").as_string().empty());
  }

  static std::int64_t unix_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  dll::shared_library lib_;  // declared first: it must outlive the instance
  test_host host_;
  const xconn_plugin_api* api_ = nullptr;
  void* instance_ = nullptr;
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

TEST_F(EchoMessaging, InjectWithFilesNeedsTheFileStore) {
  http_reply reply = http("POST", "/inject", R"({"connector_channel_id":"ch-1","text":"see",
      "files":[{"filename":"a.txt","mime_type":"text/plain","content_base64":"aGk="}]})");
  expect_http_error(reply, 400, "files_unsupported");
  EXPECT_EQ(reply.body.at("error").at("message").as_string(),
            "attachments need the host file store (not yet available)");
  EXPECT_TRUE(host_.emits().empty());
}

TEST_F(EchoMessaging, UnknownRoutesAre404) {
  expect_http_error(http("GET", "/nope"), 404, "not_found");
  expect_http_error(http("GET", "/inject"), 404, "not_found");
  expect_http_error(http("POST", "/sent", "{}"), 404, "not_found");
}

// ---- send and GET /sent ----

TEST_F(EchoMessaging, SendDeliversAtOnceAndSentListsNewestLastOncePerKey) {
  std::int64_t before = unix_now_ms();
  EXPECT_EQ(send(R"({"idempotency_key":"msg_a","text":"first","files":[],"channel_key":"echo/group/default"})"),
            object_of(R"({"ok":true,"external_key":"echo-msg_a","verified":true})"));
  EXPECT_EQ(send(R"({"idempotency_key":"msg_b","text":"second","channel_key":"echo/dm/u1",
                    "files":[{"file_ref":"f_1","type":"file","filename":"a.txt","mime_type":"text/plain",
                              "byte_size":2},
                             {"file_ref":"f_2","type":"image","filename":"b.png","mime_type":"image/png",
                              "byte_size":9}],
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
                                 {"message_id":"msg_b","text":"second","files":["f_1","f_2"]}])"));
  EXPECT_TRUE(host_.emits().empty()) << "a send is outbound only";
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
