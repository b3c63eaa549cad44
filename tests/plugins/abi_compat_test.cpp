// Plugin ABI 1.x forward compatibility: a plugin built against the 1.0 header as the first commit had it
// (fixtures/abi-1.0, six hooks) loads on today's host, serves its card and tool, and every hook it lacks takes
// its plugin.h default; a 1.0 table whose manifest declares what only a later hook can serve is refused.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;

class abi_compat : public ::testing::Test {
 protected:
  void SetUp() override { server_.start(); }
  server_fixture server_{{"echo.so", "legacy.so", "legacy-auth.so"}};
};

TEST_F(abi_compat, a_1_0_plugin_loads_beside_a_current_one_and_serves_its_card) {
  auto list = http_get(server_.port(), "/connectors", server_.key()).json().as_object();
  std::vector<std::string> loaded;
  for (const auto& c : list.at("connectors").as_array()) loaded.emplace_back(c.as_object().at("plugin_id").as_string());
  EXPECT_EQ(loaded, (std::vector<std::string>{"echo", "legacy"}));

  auto card = http_get(server_.port(), "/connectors/legacy/connector-card.json");
  EXPECT_EQ(card.json().as_object().at("connector_card_id"), "im.legacy");
  EXPECT_EQ(schema_violations("xagent.connector.v1", card.body), "");
}

TEST_F(abi_compat, a_1_0_table_whose_card_declares_auth_flows_is_refused) {
  auto list = http_get(server_.port(), "/connectors", server_.key()).json().as_object();
  ASSERT_EQ(list.at("refused").as_array().size(), 1u);
  const auto& refused = list.at("refused").as_array()[0].as_object();
  EXPECT_EQ(refused.at("plugin_id"), "legacy-auth");
  std::string reason(refused.at("reason").as_string());
  EXPECT_NE(reason.find("auth_flows"), std::string::npos) << reason;
  EXPECT_NE(reason.find("auth hook"), std::string::npos) << reason;
}

TEST_F(abi_compat, the_hooks_a_1_0_plugin_lacks_answer_their_defaults) {
  auto c = dp_client::connect(server_.port(), server_.key(), "legacy");
  ASSERT_TRUE(c);
  auto channel = c->open();
  ASSERT_FALSE(channel.empty());

  // No auth flow: the host refuses the flow id before any plugin code runs.
  auto start = c->auth_start(channel, "legacy_token", json::object{{"token", "x"}});
  ASSERT_TRUE(start);
  EXPECT_EQ(error_code(*start), "auth_flow_not_found");

  // on_auth_logout is absent: a sign-out has nothing to clear in the plugin and succeeds.
  for (int i = 0; i < 2; ++i) {
    auto out = c->request("auth.logout", {}, channel);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->at("type"), "auth.logout.ack");
    EXPECT_EQ(error_code(*out), "");
    EXPECT_EQ(text_of(payload_of(*out), "status"), "ok");
  }

  // Its one hook past the lifecycle still serves once the host allows a call: tools need a signed-in channel,
  // which a plugin without auth never has, so the host answers for it.
  auto tool = c->invoke(channel, "legacy_echo", {{"text", "abc"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "connection_not_authenticated");

  auto close = c->request("channel.close", {}, channel);
  ASSERT_TRUE(close);
  EXPECT_EQ(close->at("type"), "channel.close.ack");

  // The server stayed up and echo still serves beside it.
  auto echo = dp_client::connect(server_.port(), server_.key(), "echo");
  ASSERT_TRUE(echo);
  auto signed_in = echo->open_authenticated();
  ASSERT_FALSE(signed_in.empty());
  auto reversed = echo->invoke(signed_in, "echo_reverse", {{"text", "abc"}});
  ASSERT_TRUE(reversed);
  EXPECT_EQ(error_code(*reversed), "");
}

}  // namespace
}  // namespace xconn::test
