// Drives the real echo.so through the C ABI alone, the way the host does: its static table, then an instance.
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

// ---- echo: the static table ----

class EchoAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    lib_ = open_plugin(xconn::test::plugin_dir() / "echo.so");
    api_ = entry(lib_);
    ASSERT_NE(api_, nullptr);
  }

  // validate_config's verdict: "" when valid, else the reason it wrote.
  std::string validate(std::string_view config, size_t capacity = 256) {
    std::vector<char> error(capacity, 'X');
    if (api_->xconn_plugin_on_validate_config(c_str(config), error.data(), error.size()) == 0) return "";
    EXPECT_NE(std::find(error.begin(), error.end(), '\0'), error.end()) << "reason not NUL-terminated";
    return std::string(error.data());
  }

  dll::shared_library lib_;
  const xconn_plugin_api* api_ = nullptr;
};

TEST_F(EchoAbi, ServesOnlyApiMajorOne) {
  EXPECT_EQ(api_->struct_size, sizeof(xconn_plugin_api));
  EXPECT_EQ(api_->api_major, XCONN_PLUGIN_API_MAJOR);
  EXPECT_EQ(api_->api_minor, XCONN_PLUGIN_API_MINOR);
  EXPECT_EQ(entry(lib_, 2), nullptr);
}

TEST_F(EchoAbi, ManifestDeclaresTheCardSkillAndCapability) {
  json::object manifest = json::parse(view(api_->manifest_json)).as_object();
  EXPECT_EQ(manifest.at("id").as_string(), "echo");

  const json::object& card = manifest.at("card").as_object();
  EXPECT_EQ(card.at("connector_card_id").as_string(), "im.echo");
  EXPECT_EQ(card.at("connector").at("name").as_string(), "Echo");
  EXPECT_EQ(card.at("connector").at("version").as_string(), "0.1.0");
  EXPECT_EQ(card.at("supports").at("user_channel_mode").as_string(), "multiple");
  EXPECT_EQ(card.at("supports").at("profiles"), json::parse(R"(["xagent.im.v1","xagent.im.v2"])"));
  EXPECT_EQ(card.at("security").at("trust_level").as_string(), "builtin");
  EXPECT_EQ(card.at("auth_flows").as_array().size(), 2u);
  const json::object& token_flow = card.at("auth_flows").at(0).as_object();
  EXPECT_EQ(token_flow.at("id").as_string(), "echo_token");
  EXPECT_EQ(token_flow.at("type").as_string(), "form");
  EXPECT_EQ(token_flow.at("target_type").as_string(), "im");
  EXPECT_FALSE(token_flow.at("title").as_string().empty());
  EXPECT_EQ(token_flow.at("fields"), json::parse(R"([{"name":"token","label":"Token","input_type":"password",
      "secret":true,"required":true}])"));
  const json::object& qr_flow = card.at("auth_flows").at(1).as_object();
  EXPECT_EQ(qr_flow.at("id").as_string(), "echo_qr_login");
  EXPECT_EQ(qr_flow.at("type").as_string(), "qr_login");
  EXPECT_EQ(qr_flow.at("target_type").as_string(), "im");
  EXPECT_FALSE(qr_flow.at("title").as_string().empty());
  EXPECT_FALSE(qr_flow.contains("fields"));

  std::set<std::string> tool_ids;
  for (const json::value& tool : card.at("tools").as_array()) {
    tool_ids.emplace(tool.at("tool_id").as_string());
    EXPECT_EQ(tool.at("profile").as_string(), "xagent.im.v2");
    EXPECT_EQ(tool.at("related_skill_ids"), json::parse(R"(["connector-im-echo"])"));
    const json::object& input = tool.at("input_schema").as_object();
    EXPECT_EQ(input.at("type").as_string(), "object");
    EXPECT_FALSE(input.at("properties").as_object().contains("connector_channel_id")) << "the host injects it";
    for (const json::value& required : input.at("required").as_array()) {
      EXPECT_NE(required.as_string(), "connector_channel_id");
    }
    EXPECT_TRUE(tool.at("output_schema").is_object());
  }
  EXPECT_EQ(tool_ids,
            (std::set<std::string>{"echo_send_message", "echo_reverse", "echo_fail", "echo_sleep", "echo_burst"}));
  const json::value& burst = card.at("tools").as_array().back();
  EXPECT_EQ(burst.at("tool_id").as_string(), "echo_burst");
  EXPECT_EQ(burst.at("input_schema").at("required"), json::parse(R"(["count","text"])"));
  EXPECT_EQ(burst.at("input_schema").at("properties").at("count"),
            json::parse(R"({"type":"integer","minimum":1,"maximum":10000,
                            "description":"How many messages the peer sends."})"));
  EXPECT_EQ(burst.at("output_schema").at("required"), json::parse(R"(["status","count"])"));

  EXPECT_EQ(manifest.at("tool_options"),
            json::parse(R"({"echo_send_message":{"side_effect":true},"echo_burst":{"side_effect":true},)"
                        R"("echo_reverse":{"non_blocking":true},"echo_fail":{"non_blocking":true}})"));
  std::string_view skill = manifest.at("skill").as_string();
  EXPECT_TRUE(skill.starts_with("---\nname: connector-im-echo\ndescription: ")) << skill.substr(0, 80);
  for (const char* name : {"echo_sleep", "echo_send_message", "echo_burst", "echo_token", "echo_qr_login"}) {
    EXPECT_NE(skill.find(name), std::string_view::npos) << name;
  }
  std::string_view prompt = manifest.at("system_prompt").as_string();
  EXPECT_FALSE(prompt.empty());
  EXPECT_NE(prompt.find("echo_send_message"), std::string_view::npos);
  EXPECT_LT(prompt.size(), 4000u);
  EXPECT_FALSE(manifest.contains("chat"));

  EXPECT_EQ(manifest.at("capability"), json::parse(R"({"adapter_id":"echo","adapter_version":"0.1.0",
      "supported_targets":["echo"],"supported_features":["text","tools","messages"]})"));

  // Echo shows typing but cannot edit a sent message or split one; both routes need the API key.
  EXPECT_EQ(manifest.at("delivery"), json::parse(R"({"typing":true})"));
  EXPECT_EQ(manifest.at("http_routes"),
            json::parse(R"([{"path":"/inject","method":"POST"},{"path":"/sent","method":"GET"}])"));
}

TEST_F(EchoAbi, BuildFactsAreStamped) {
  json::object build = json::parse(view(api_->build_json)).as_object();
  EXPECT_EQ(build.at("version").as_string(), "0.1.0");
  EXPECT_TRUE(build.at("git_tag").is_string());
  EXPECT_FALSE(build.at("git_rev").as_string().empty());
  EXPECT_EQ(build.at("build_time").as_string().size(), 10u);  // yyMMddHHmm
}

TEST_F(EchoAbi, ValidateConfigAcceptsTheFourGroups) {
  EXPECT_EQ(validate(R"({"auth":{},"config":{},"route":{},"policy":{}})"), "");
  EXPECT_EQ(validate("{}"), "");
  EXPECT_EQ(validate(R"({"config":{"sent_log_max":1}})"), "");
  EXPECT_EQ(validate(R"({"config":{"sent_log_max":100000}})"), "");
}

TEST_F(EchoAbi, ValidateConfigNamesTheKeyNeverTheValue) {
  const std::string bad_count = "config.sent_log_max: must be an integer 1..100000";
  EXPECT_EQ(validate(R"({"config":{"sent_log_max":0}})"), bad_count);
  EXPECT_EQ(validate(R"({"config":{"sent_log_max":100001}})"), bad_count);
  EXPECT_EQ(validate(R"({"config":{"sent_log_max":5.0}})"), bad_count);
  std::string reason = validate(R"({"config":{"sent_log_max":"planted-secret-4711"}})");
  EXPECT_EQ(reason, bad_count);

  reason = validate(R"({"auth":{"x":"planted-secret-4711"}})");
  EXPECT_EQ(reason, "auth.x: unknown key");
  EXPECT_EQ(reason.find("planted-secret"), std::string::npos);
  EXPECT_EQ(validate(R"({"route":{"sent_log_max":5}})"), "route.sent_log_max: unknown key");
  EXPECT_EQ(validate(R"({"policy":[]})"), "policy: must be an object");
  EXPECT_EQ(validate(R"({"extras":{}})"), "extras: unknown group");
  EXPECT_EQ(validate("not json"), "section: must be a JSON object");

  // A short buffer still gets a NUL-terminated prefix of the reason.
  EXPECT_EQ(validate(R"({"auth":{"x":1}})", 7), "auth.x");
}

// ---- echo: an instance ----

TEST_F(EchoInstance, StartLogsAndReportsHealthy) {
  EXPECT_EQ(host_.log_lines(), std::vector<std::string>{"echo started"});
  EXPECT_EQ(host_.health(), std::vector<xconn_health>{XCONN_HEALTH_HEALTHY});
}

TEST_F(EchoInstance, ReverseByCodePoint) {
  test_call& call = invoke("echo_reverse", R"({"connector_channel_id":"ch-1","text":"héllo😀"})");
  ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  EXPECT_EQ(call.result().at("text").as_string(), "😀olléh");

  test_call& empty = invoke("echo_reverse", R"({"text":""})");
  EXPECT_EQ(empty.result().at("text").as_string(), "");
}

TEST_F(EchoInstance, FailAnswersTheGivenCode) {
  expect_error(invoke("echo_fail", R"({"code":"rate_limited.v2-x"})"), "rate_limited.v2-x");
  expect_error(invoke("echo_fail", R"({"code":"Not A Code"})"), "invalid_arguments");
  expect_error(invoke("echo_fail", R"({"code":""})"), "invalid_arguments");
  expect_error(invoke("echo_fail", R"({"code":")" + std::string(65, 'a') + "\"}"), "invalid_arguments");
}

TEST_F(EchoInstance, SleepAnswersLaterWithoutBlockingTheCaller) {
  auto began = std::chrono::steady_clock::now();
  test_call& call = invoke_call("echo_sleep", R"({"ms":50})");
  ASSERT_TRUE(host_.wait(call));
  EXPECT_GE(std::chrono::steady_clock::now() - began, 50ms);
  ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  EXPECT_EQ(call.result(), json::parse(R"({"slept_ms":50})"));

  // A caller blocked for a minute would hang here; the call must still be pending when invoke returns.
  test_call& long_sleep = invoke_call("echo_sleep", R"({"ms":60000})");
  EXPECT_FALSE(host_.done(long_sleep));
}

TEST_F(EchoInstance, StopFailsPendingSleepsAsRetryable) {
  test_call& sleeping = invoke_call("echo_sleep", R"({"ms":600000})");
  test_call& stop = host_.new_call();
  api_->xconn_plugin_on_stop(instance_, stop.c_call());
  ASSERT_TRUE(host_.wait(stop));
  EXPECT_EQ(stop.status, XCONN_STATUS_OK);
  ASSERT_TRUE(host_.wait(sleeping));
  expect_error(sleeping, "stopped", true);
  expect_error(invoke("echo_sleep", R"({"ms":1})"), "stopped", true);  // stopped stays stopped
}

TEST_F(EchoInstance, StopTwiceThenStartAgain) {
  for (int i = 0; i < 2; ++i) {
    test_call& stop = host_.new_call();
    api_->xconn_plugin_on_stop(instance_, stop.c_call());
    ASSERT_TRUE(host_.wait(stop));
    EXPECT_EQ(stop.status, XCONN_STATUS_OK);
  }
  test_call& start = start_call();
  ASSERT_TRUE(host_.wait(start));
  EXPECT_EQ(invoke("echo_sleep", R"({"ms":0})").status, XCONN_STATUS_OK);
}

TEST_F(EchoInstance, UnknownToolAndBadArguments) {
  expect_error(invoke("echo_nope", "{}"), "tool_not_found");
  expect_error(invoke("echo_send_message", "{}"), "invalid_arguments");
  expect_error(invoke("echo_send_message", R"({"text":["hi"]})"), "invalid_arguments");
  expect_error(invoke("echo_reverse", "{}"), "invalid_arguments");
  expect_error(invoke("echo_reverse", R"({"text":5})"), "invalid_arguments");
  expect_error(invoke("echo_reverse", "[\"text\"]"), "invalid_arguments");
  expect_error(invoke("echo_reverse", "not json"), "invalid_arguments");
  expect_error(invoke("echo_reverse", "{\"text\":\"\xff\xfe\"}"), "invalid_arguments");   // not UTF-8
  expect_error(invoke("echo_reverse", "{\"text\":\"\xc0\xaf\"}"), "invalid_arguments");   // overlong
  expect_error(invoke("echo_reverse", "{\"text\":\"\xed\xa0\x80\"}"), "invalid_arguments");  // a surrogate
  expect_error(invoke("echo_fail", "{}"), "invalid_arguments");
  for (const char* ms : {"-1", "600001", "1.5", "\"10\"", "null"}) {
    expect_error(invoke("echo_sleep", std::string(R"({"ms":)") + ms + "}"), "invalid_arguments");
  }
}

TEST_F(EchoInstance, SendMessageAnswersSentWithAFreshId) {
  const std::regex message_id("echo_msg_[0-9A-Za-z]{22}");
  std::set<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    test_call& call = invoke("echo_send_message", R"({"connector_channel_id":"ch-1","text":"hello"})");
    ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
    json::object result = call.result();
    EXPECT_EQ(result.size(), 2u) << call.json;
    EXPECT_EQ(result.at("status").as_string(), "sent");
    std::string id(result.at("message_id").as_string());
    EXPECT_TRUE(std::regex_match(id, message_id)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 2u) << "every send gets its own message_id";
  EXPECT_EQ(host_.emits().size(), 2u) << "the peer answers each";
}

}  // namespace
