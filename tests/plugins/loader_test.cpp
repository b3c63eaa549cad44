// Real .so files in plugins.dir, loaded by the real server: good ones serve, bad ones are refused with one
// clear reason and the server keeps serving.
#include "core/plugin_host/connector_registry.hpp"

#include "support/registry_fixture.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;

std::map<std::string, std::string> refused_reasons(unsigned short port, const std::string& key) {
  std::map<std::string, std::string> out;
  auto list = http_get(port, "/connectors", key).json();
  for (const auto& r : list.as_object().at("refused").as_array())
    out[std::string(r.as_object().at("plugin_id").as_string())] = r.as_object().at("reason").as_string();
  return out;
}

std::vector<std::string> loaded_ids(unsigned short port, const std::string& key) {
  std::vector<std::string> out;
  auto list = http_get(port, "/connectors", key).json();
  for (const auto& c : list.as_object().at("connectors").as_array())
    out.emplace_back(c.as_object().at("plugin_id").as_string());
  return out;
}

TEST(loader, bad_files_are_refused_with_a_reason_and_good_ones_serve) {
  server_fixture server({"echo.so", "second.so", "garbage.so", "no-entry.so", "abi-major2.so", "bad-chat.so",
                         "thrower.so"});
  server.start();
  EXPECT_EQ(loaded_ids(server.port(), server.key()), (std::vector<std::string>{"echo", "second"}));
  auto refused = refused_reasons(server.port(), server.key());
  ASSERT_EQ(refused.size(), 5u);
  EXPECT_NE(refused["garbage"].find("not a loadable shared library"), std::string::npos) << refused["garbage"];
  EXPECT_NE(refused["no-entry"].find("xconn_plugin_entry"), std::string::npos) << refused["no-entry"];
  EXPECT_NE(refused["abi-major2"].find("major 2"), std::string::npos) << refused["abi-major2"];
  EXPECT_NE(refused["bad-chat"].find("chat.title"), std::string::npos) << refused["bad-chat"];
  EXPECT_NE(refused["thrower"].find("start failed"), std::string::npos) << refused["thrower"];
  EXPECT_NE(refused["thrower"].find("boom"), std::string::npos) << refused["thrower"];

  // Both good plugins serve their own card at their own base path.
  EXPECT_EQ(http_get(server.port(), "/connectors/second/connector-card.json").json().as_object().at("connector_card_id"),
            "im.second");
  auto ws = ws_client::connect(server.port(), "/connectors/second/ws", {server.key(), "xagent.connector.packet.v1"});
  ASSERT_TRUE(ws);
  auto ack = ws->hello({{"connector_card_id", "im.second"}});
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("type"), "connector.hello.ack");
  // The echo card id is not second's.
  auto other = ws_client::connect(server.port(), "/connectors/second/ws", {server.key(), "xagent.connector.packet.v1"});
  auto mismatch = other->hello();
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->at("error").as_object().at("code"), "connector_card_id_mismatch");
}

TEST(loader, a_file_whose_name_is_not_its_id_is_refused) {
  server_fixture server({"echo.so"});
  std::filesystem::copy_file(fixture_plugin_dir() / "second.so", server.dir().path() / "plugins" / "renamed.so");
  server.start();
  auto refused = refused_reasons(server.port(), server.key());
  EXPECT_NE(refused["renamed"].find("does not match the file name"), std::string::npos) << refused["renamed"];
}

TEST(loader, a_plugin_that_hangs_in_start_is_refused_after_the_limit) {
  server_fixture server({"echo.so", "hang.so"});
  auto begin = std::chrono::steady_clock::now();
  server.start();
  EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  auto refused = refused_reasons(server.port(), server.key());
  EXPECT_NE(refused["hang"].find("start_timeout"), std::string::npos) << refused["hang"];
  EXPECT_EQ(http_get(server.port(), "/connectors/echo/health", server.key()).status, 200);
}

TEST(loader, the_allow_list_loads_only_listed_ids) {
  server_fixture server({"echo.so", "second.so"}, [](config& c) { c.plugins.allow = {"second"}; });
  server.start();
  EXPECT_EQ(loaded_ids(server.port(), server.key()), (std::vector<std::string>{"second"}));
  EXPECT_TRUE(refused_reasons(server.port(), server.key()).empty());
  EXPECT_EQ(http_get(server.port(), "/connectors/echo/connector-card.json").status, 404);
}

TEST(loader, a_config_section_the_plugin_rejects_is_named_with_its_line) {
  auto parsed = parse_config("connectors:\n  echo:\n    config:\n      sent_log_max: 0\n");
  ASSERT_TRUE(parsed) << parsed.error().what();
  server_fixture server({"echo.so"}, [&](config& c) { c.connectors = parsed->connectors; });
  server.start();
  auto refused = refused_reasons(server.port(), server.key());
  EXPECT_NE(refused["echo"].find(":4: connectors.echo.config.sent_log_max"), std::string::npos) << refused["echo"];
  EXPECT_TRUE(loaded_ids(server.port(), server.key()).empty());
}

TEST(loader, the_config_digest_follows_the_section_but_not_auth_values) {
  auto digest_of = [](const std::string& yaml) {
    auto parsed = parse_config(yaml);
    EXPECT_TRUE(parsed);
    server_fixture server({"echo.so"}, [&](config& c) { c.connectors = parsed->connectors; });
    server.start();
    auto list = http_get(server.port(), "/connectors", server.key()).json();
    return std::string(list.as_object().at("connectors").as_array().at(0).as_object().at("config_digest").as_string());
  };
  auto base = digest_of("connectors:\n  echo:\n    config:\n      sent_log_max: 10\n");
  EXPECT_EQ(base, digest_of("connectors:\n  echo:\n    config:\n      sent_log_max: 10\n"));
  EXPECT_NE(base, digest_of("connectors:\n  echo:\n    config:\n      sent_log_max: 11\n"));
}

// The connector itself: calls run on the pool, answers come back once, limits are the host's.
class connector_calls : public registry_fixture {
 protected:
  connector_calls() : registry_fixture({"thrower.so", "second.so"}, {"echo.so"}) {}

  call_result invoke(const std::string& plugin, const std::string& tool, const std::string& args,
                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto conn = registry->find(plugin);
    EXPECT_TRUE(conn);
    std::promise<call_result> done;
    auto future = done.get_future();
    std::atomic<int> answers{0};
    conn->invoke_tool("cch_test", tool, args, "{}", conn->make_strand(), timeout, [&](call_result r) {
      if (++answers == 1) done.set_value(std::move(r));
    });
    EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    return future.get();
  }
};

TEST_F(connector_calls, results_errors_and_throws_come_back_once) {
  auto r = invoke("echo", "echo_reverse", R"({"text":"abc","connector_channel_id":"cch_other"})");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(json::parse(r.json).as_object().at("text"), "cba");

  auto fail = invoke("echo", "echo_fail", R"({"code":"quota_exceeded"})");
  EXPECT_FALSE(fail.ok);
  EXPECT_EQ(fail.code, "quota_exceeded");
  EXPECT_FALSE(fail.thrown);

  auto pong = invoke("second", "second_ping", "{}");
  EXPECT_TRUE(pong.ok);
}

TEST_F(connector_calls, a_late_answer_after_the_host_timeout_is_dropped) {
  auto r = invoke("echo", "echo_sleep", R"({"ms":1500})", std::chrono::milliseconds(100));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.code, "tool_timeout");
  EXPECT_EQ(registry->find("echo")->health().health, health_state::degraded);
  // The plugin's late completion arrives and is dropped; the connector keeps answering, and a call answered in
  // time lifts the host's verdict.
  auto after = invoke("echo", "echo_reverse", R"({"text":"ok"})");
  EXPECT_TRUE(after.ok);
  EXPECT_EQ(registry->find("echo")->health().health, health_state::healthy);
  EXPECT_EQ(registry->find("echo")->health().last_error_code, "tool_timeout");  // what happened last stays readable
}

// A connector whose plugin was removed answers every later call unknown_connector (retryable: it may come back).
TEST_F(connector_calls, a_call_to_a_removed_plugin_answers_unknown_connector) {
  auto second = registry->find("second");
  ASSERT_TRUE(second);
  std::filesystem::remove(dir.path() / "plugins" / "second.so");
  registry->rescan();
  ASSERT_TRUE(wait_until([&] { return !registry->find("second"); }));
  std::promise<call_result> done;
  second->invoke_tool("cch_test", "second_ping", "{}", "{}", second->make_strand(), std::chrono::seconds(5),
                      [&](call_result r) { done.set_value(std::move(r)); });
  auto future = done.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto r = future.get();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.code, "unknown_connector");
  EXPECT_TRUE(r.retryable);
}

TEST_F(connector_calls, a_thrower_is_refused_at_start_and_a_thrown_tool_is_an_error) {
  EXPECT_EQ(registry->find("thrower"), nullptr);
  ASSERT_EQ(registry->refused().size(), 1u);
}

TEST_F(connector_calls, many_concurrent_calls_all_answer) {
  auto conn = registry->find("echo");
  auto strand = conn->make_strand();  // one channel: calls serialized, answers still concurrent
  constexpr int n = 300;
  std::atomic<int> ok{0};
  std::atomic<int> answered{0};
  for (int i = 0; i < n; ++i)
    conn->invoke_tool("cch_test", "echo_reverse", R"({"text":"x)" + std::to_string(i) + R"("})", "{}", strand,
                      std::chrono::seconds(10), [&](call_result r) {
                        ok += r.ok;
                        ++answered;
                      });
  EXPECT_TRUE(wait_until([&] { return answered.load() == n; }));
  EXPECT_EQ(ok.load(), n);
}

}  // namespace
}  // namespace xconn::test
