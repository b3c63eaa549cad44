// Tools a plugin declares non_blocking (docs/plugin-api.md "Tool options"), on the real server through the fixture
// relay, whose tools answer the name of the thread they ran on: such a tool runs on its socket's I/O thread; one
// whose calls overrun plugins.inline_budget_us 3 times in a row is still answered, then runs on the plugin pool,
// and /health and /metrics say so (an overrun now and then does not move it); a tool not so declared never runs
// on an I/O thread.
#include "support/relay_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

class tool_inline : public relay_channel_test {
 protected:
  // A budget no loaded machine misses by accident (relay_where takes microseconds), and well below the 80 ms
  // relay_where_slowly takes.
  tool_inline() : relay_channel_test([](config& c) { c.plugins.inline_budget_us = 50000; }) {}

  // The thread the tool ran on, or "" when the call failed.
  std::string thread_of(const std::string& tool, json::object arguments = {}) {
    auto ack = dp->invoke(channel, tool, std::move(arguments));
    if (!ack || !error_code(*ack).empty()) return "";
    return std::string(payload_of(*ack)["result"].as_object().at("thread").as_string());
  }

  json::object tools_health() {
    auto r = http_get(server.port(), "/connectors/relay/health", server.key());
    return json::parse(r.body).as_object().at("tools").as_object();
  }
};

bool on_an_io_thread(const std::string& thread) { return thread.starts_with("xconn-io-"); }

TEST_F(tool_inline, a_non_blocking_tool_runs_on_its_sockets_io_thread) {
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(on_an_io_thread(thread_of("relay_where"))) << "call " << i;
  auto tools = tools_health();
  EXPECT_EQ(tools.at("inline_calls").to_number<int>(), 3);
  EXPECT_LE(tools.at("inline_overruns").to_number<int>(), 1) << "at most a cold first call";
  EXPECT_TRUE(tools.at("moved_to_pool").as_array().empty());
}

TEST_F(tool_inline, one_that_keeps_overrunning_is_answered_then_runs_on_the_pool_and_says_so) {
  for (int i = 0; i < 3; ++i)  // each overrun is only known afterwards: the three are answered where they ran
    EXPECT_TRUE(on_an_io_thread(thread_of("relay_where_slowly"))) << "call " << i;
  const std::string later = thread_of("relay_where_slowly");
  ASSERT_FALSE(later.empty());
  EXPECT_FALSE(on_an_io_thread(later)) << later;
  EXPECT_TRUE(on_an_io_thread(thread_of("relay_where"))) << "another tool of the plugin keeps its place";

  auto tools = tools_health();
  EXPECT_EQ(tools.at("inline_calls").to_number<int>(), 4);
  EXPECT_EQ(tools.at("inline_overruns").to_number<int>(), 3);
  EXPECT_EQ(json::serialize(tools.at("moved_to_pool")), R"(["relay_where_slowly"])");
  auto metrics = http_get(server.port(), "/metrics", server.key()).body;
  EXPECT_NE(metrics.find("xconn_tool_inline_calls_total{plugin=\"relay\"} 4\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("xconn_tool_inline_overruns_total{plugin=\"relay\"} 3\n"), std::string::npos) << metrics;
}

TEST_F(tool_inline, an_overrun_now_and_then_does_not_move_a_tool) {
  const json::object slow{{"sleep_ms", 80}};
  for (int round = 0; round < 3; ++round) {  // two overruns, then a call in time: the streak starts again
    EXPECT_TRUE(on_an_io_thread(thread_of("relay_where", slow)));
    EXPECT_TRUE(on_an_io_thread(thread_of("relay_where", slow)));
    EXPECT_TRUE(on_an_io_thread(thread_of("relay_where")));
  }
  auto tools = tools_health();
  EXPECT_EQ(tools.at("inline_overruns").to_number<int>(), 6);
  EXPECT_TRUE(tools.at("moved_to_pool").as_array().empty());
}

TEST_F(tool_inline, a_tool_not_declared_non_blocking_never_runs_on_an_io_thread) {
  auto ack = dp->invoke(channel, "relay_log", json::object{});
  ASSERT_TRUE(ack);
  EXPECT_EQ(tools_health().at("inline_calls").to_number<int>(), 0);
}

TEST(tool_inline_off, a_budget_of_zero_keeps_every_tool_on_the_pool) {
  server_fixture server{{"relay.so"}, [](config& c) { c.plugins.inline_budget_us = 0; }};
  server.start();
  auto dp = dp_client::connect(server.port(), server.key(), "relay");
  ASSERT_TRUE(dp);
  auto channel = dp->open_signed_in("relay_token", {{"token", "tok-relay-1"}});
  auto ack = dp->invoke(channel, "relay_where", json::object{});
  ASSERT_TRUE(ack);
  ASSERT_EQ(error_code(*ack), "");
  EXPECT_FALSE(on_an_io_thread(std::string(payload_of(*ack)["result"].as_object().at("thread").as_string())));
  dp.reset();
  server.stop();
}

}  // namespace
}  // namespace xconn::test
