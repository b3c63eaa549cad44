// The control plane on the real server: card, skill, capability, health, /connectors, keys.
#include "core/control/control_plane.hpp"

#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;

class control_plane : public ::testing::Test {
 protected:
  void SetUp() override { server.start(); }
  server_fixture server;
};

TEST_F(control_plane, card_is_public_valid_and_host_completed) {
  auto r = http_get(server.port(), "/connectors/echo/connector-card.json");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "application/json");
  EXPECT_EQ(schema_violations("xagent.connector.v1", r.body), "");
  auto card = r.json().as_object();
  EXPECT_EQ(card["schema"], "xagent.connector/v1");
  EXPECT_EQ(card["protocol_version"], "3.0");
  EXPECT_EQ(card["connector_card_id"], "im.echo");
  EXPECT_EQ(card["connector"].as_object()["name"], "Echo");
  EXPECT_EQ(card["security"].as_object()["api_key_required"], true);
  EXPECT_TRUE(card["build"].as_object().contains("build_time"));
  auto supports = card["supports"].as_object();
  EXPECT_EQ(supports["user_channel_mode"], "multiple");
  EXPECT_EQ(supports["profiles"], (json::array{"xagent.im.v1", "xagent.im.v2"}));
  ASSERT_FALSE(card["tools"].as_array().empty());
  for (const auto& t : card["tools"].as_array()) {
    auto schema = t.as_object().at("input_schema").as_object();
    EXPECT_EQ(schema.at("properties").as_object().at("connector_channel_id").as_object().at("type"), "string");
    const auto& required = schema.at("required").as_array();
    EXPECT_NE(std::find(required.begin(), required.end(), json::value("connector_channel_id")), required.end());
  }
  EXPECT_EQ(card.find("server_base_url"), card.end());
  EXPECT_EQ(r.body.find(server.key()), std::string::npos);
}

TEST_F(control_plane, skill_is_public_with_the_card_derived_name) {
  auto r = http_get(server.port(), "/connectors/echo/skill.md");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/markdown; charset=utf-8");
  EXPECT_EQ(r.body.rfind("---\n", 0), 0u);
  EXPECT_NE(r.body.find("\nname: connector-im-echo\n"), std::string::npos);
  EXPECT_EQ(r.body.find(server.key()), std::string::npos);
}

TEST_F(control_plane, capability_is_public_with_live_health) {
  auto r = http_get(server.port(), "/connectors/echo/capability.json");
  ASSERT_EQ(r.status, 200);
  auto cap = r.json().as_object();
  EXPECT_EQ(cap["adapter_id"], "echo");
  EXPECT_TRUE(cap["adapter_version"].is_string());
  EXPECT_TRUE(cap["supported_targets"].is_array());
  EXPECT_TRUE(cap["supported_features"].is_array());
  EXPECT_EQ(cap["health"], "healthy");
}

TEST_F(control_plane, health_needs_the_key_and_matches_the_card) {
  auto denied = http_get(server.port(), "/connectors/echo/health");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.json().as_object()["error"].as_object()["code"], "unauthorized");
  EXPECT_EQ(http_get(server.port(), "/connectors/echo/health", "xck_wrong_key_0123456789abcd").status, 401);

  auto r = http_get(server.port(), "/connectors/echo/health", server.key());
  ASSERT_EQ(r.status, 200);
  auto health = r.json().as_object();
  auto card = http_get(server.port(), "/connectors/echo/connector-card.json").json().as_object();
  EXPECT_EQ(health["status"], "ok");
  EXPECT_EQ(health["connector_card_id"], "im.echo");
  EXPECT_EQ(health["connector_card_version"], card["connector"].as_object()["version"]);
  EXPECT_EQ(health["protocol_version"], "3.0");
  EXPECT_EQ(health["build"], card["build"]);
  auto adapter = health["adapter"].as_object();
  EXPECT_EQ(adapter["health"], "healthy");
  EXPECT_TRUE(adapter["last_error_code"].is_string());
  EXPECT_GT(adapter["last_seen_at"].as_int64(), 0);
  EXPECT_TRUE(health["channels"].as_object()["open"].is_int64());
  EXPECT_TRUE(health["channels"].as_object()["authenticated"].is_int64());
}

TEST_F(control_plane, bearer_scheme_is_case_insensitive_but_the_key_is_exact) {
  EXPECT_EQ(http_call(server.port(), "GET", "/connectors/echo/health", {{"Authorization", "bearer " + server.key()}}).status,
            200);
  EXPECT_EQ(http_call(server.port(), "GET", "/connectors/echo/health", {{"Authorization", server.key()}}).status, 401);
  EXPECT_EQ(http_call(server.port(), "GET", "/connectors/echo/health",
                      {{"Authorization", "Bearer " + server.key() + "x"}})
                .status,
            401);
  auto prefix = server.key().substr(0, server.key().size() - 1);
  EXPECT_EQ(http_call(server.port(), "GET", "/connectors/echo/health", {{"Authorization", "Bearer " + prefix}}).status,
            401);
}

TEST_F(control_plane, connectors_lists_generation_and_config_digest) {
  EXPECT_EQ(http_get(server.port(), "/connectors").status, 401);
  auto r = http_get(server.port(), "/connectors", server.key());
  ASSERT_EQ(r.status, 200);
  auto list = r.json().as_object()["connectors"].as_array();
  ASSERT_EQ(list.size(), 1u);
  auto echo = list[0].as_object();
  EXPECT_EQ(echo["plugin_id"], "echo");
  EXPECT_EQ(echo["connector_card_id"], "im.echo");
  EXPECT_EQ(echo["name"], "Echo");
  EXPECT_TRUE(echo["version"].is_string());
  EXPECT_EQ(echo["health"], "healthy");
  EXPECT_GE(echo["generation"].as_int64(), 1);
  EXPECT_EQ(echo["config_digest"].as_string().size(), 64u);
}

TEST_F(control_plane, unknown_paths_and_methods) {
  EXPECT_EQ(http_get(server.port(), "/connectors/nope/connector-card.json").status, 404);
  EXPECT_EQ(http_get(server.port(), "/connectors/nope/health").status, 401);
  EXPECT_EQ(http_get(server.port(), "/connectors/nope/health", server.key()).status, 404);
  EXPECT_EQ(http_get(server.port(), "/connectors/echo/nothing", server.key()).status, 404);
  EXPECT_EQ(http_get(server.port(), "/", server.key()).status, 404);
  auto post = http_call(server.port(), "POST", "/connectors/echo/connector-card.json", {}, "{}");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.json().as_object()["error"].as_object()["code"], "method_not_allowed");
}

TEST_F(control_plane, oversized_and_garbage_requests_get_a_clear_answer_and_the_server_keeps_serving) {
  std::string big(2 * 1024 * 1024, 'x');
  auto r = http_call(server.port(), "POST", "/connectors/echo/health", {{"Authorization", "Bearer " + server.key()}}, big);
  EXPECT_EQ(r.status, 413);
  std::map<std::string, std::string> huge_header{{"X-Junk", std::string(20 * 1024, 'y')}};
  EXPECT_EQ(http_call(server.port(), "GET", "/connectors/echo/connector-card.json", huge_header).status, 413);
  EXPECT_EQ(http_get(server.port(), "/connectors/echo/connector-card.json").status, 200);
}

}  // namespace
}  // namespace xconn::test
