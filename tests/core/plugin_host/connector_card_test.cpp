#include "core/plugin_host/connector_card.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <functional>
#include <string>

#include "support/server_fixture.hpp"

namespace xconn {
namespace {
namespace json = boost::json;

const char* const good_declared = R"json({
  "connector_card_id": "im.sample",
  "connector": {"name": "Sample", "version": "1.2.3", "vendor": "xconn tests", "description": "A sample card."},
  "supports": {
    "user_channel_mode": "multiple",
    "target_types": ["im"],
    "targets": [{"target_type": "im", "provider": "sample", "label": "Sample"}],
    "profiles": ["xagent.im.v1", "xagent.im.v2"]
  },
  "tools": [
    {
      "tool_id": "sample_send",
      "profile": "xagent.im.v2",
      "title": "Send",
      "description": "Send text.",
      "related_skill_ids": ["connector-im-sample"],
      "input_schema": {
        "type": "object",
        "required": ["text"],
        "properties": {"text": {"type": "string", "description": "Text to send."}}
      },
      "output_schema": {"type": "object"}
    },
    {
      "tool_id": "sample.status-2",
      "profile": "xagent.im.v2",
      "title": "Status",
      "input_schema": {"type": "object"}
    }
  ],
  "auth_flows": [
    {"id": "sample_qr", "target_type": "im", "type": "qr_login", "title": "Scan a QR code"},
    {
      "id": "sample_token",
      "target_type": "im",
      "type": "form",
      "title": "Enter a token",
      "fields": [
        {"name": "token", "label": "Token", "input_type": "password", "required": true, "secret": true},
        {"name": "chat", "label": "Chat", "input_type": "text", "default_value": "general"}
      ]
    }
  ],
  "ui": {"login_flow": {"flow_id": "sample_qr"}},
  "security": {"trust_level": "third_party", "data_classes": ["message"]}
})json";

json::object good() { return json::parse(good_declared).as_object(); }

json::object build_facts() {
  return {{"version", "0.0.7"}, {"git_tag", "v0.0.7"}, {"git_rev", "abc1234"}, {"build_time", "2607241200"}};
}

json::object& obj(json::value& v) { return v.as_object(); }
json::object& tool(json::object& card, std::size_t i) { return card["tools"].as_array()[i].as_object(); }
json::object& field(json::object& card, std::size_t flow, std::size_t i) {
  return card["auth_flows"].as_array()[flow].as_object()["fields"].as_array()[i].as_object();
}

// Builds the good card after `edit`, expects a refusal whose message starts with `field_name`.
void expect_refused(const std::function<void(json::object&)>& edit, const std::string& field_name) {
  auto card = good();
  edit(card);
  auto r = build_card(card, build_facts());
  ASSERT_FALSE(r.has_value()) << "expected a refusal naming " << field_name << " for " << json::serialize(card);
  EXPECT_EQ(r.error().rfind(field_name, 0), 0u) << "error '" << r.error() << "' should name " << field_name;
  EXPECT_GT(r.error().size(), field_name.size()) << "a reason should follow the field";
}

TEST(BuildCard, GoodCardGetsHostFields) {
  auto r = build_card(good(), build_facts());
  ASSERT_TRUE(r.has_value()) << r.error();
  const auto& card = *r;
  EXPECT_EQ(card.at("schema"), "xagent.connector/v1");
  EXPECT_EQ(card.at("protocol_version"), "3.0");
  EXPECT_EQ(card.at("build"), json::value(build_facts()));
  EXPECT_EQ(card.at("connector_card_id"), "im.sample");
  EXPECT_EQ(card.at("security").at("api_key_required"), true);
  EXPECT_EQ(card.at("security").at("trust_level"), "third_party");
  EXPECT_EQ(card.at("ui"), good().at("ui"));
  EXPECT_EQ(card.at("auth_flows"), good().at("auth_flows"));
}

TEST(BuildCard, InjectsConnectorChannelIdIntoEveryTool) {
  auto r = build_card(good(), build_facts());
  ASSERT_TRUE(r.has_value()) << r.error();
  const auto& tools = r->at("tools").as_array();
  ASSERT_EQ(tools.size(), 2u);
  for (const auto& t : tools) {
    const auto& schema = t.at("input_schema").as_object();
    const auto& required = schema.at("required").as_array();
    ASSERT_FALSE(required.empty());
    EXPECT_EQ(required.front(), "connector_channel_id");
    EXPECT_EQ(std::count(required.begin(), required.end(), json::value("connector_channel_id")), 1);
    const auto& prop = schema.at("properties").at("connector_channel_id").as_object();
    EXPECT_EQ(prop.at("type"), "string");
    EXPECT_TRUE(prop.at("description").is_string());
  }
  // The declared arguments stay, after the injected one.
  const auto& first = tools[0].at("input_schema").as_object();
  EXPECT_EQ(first.at("required"), (json::array{"connector_channel_id", "text"}));
  EXPECT_EQ(first.at("properties").at("text").at("type"), "string");
  // A tool that declared no properties/required gets both.
  const auto& second = tools[1].at("input_schema").as_object();
  EXPECT_EQ(second.at("required"), json::array{"connector_channel_id"});
  EXPECT_EQ(second.at("properties").as_object().size(), 1u);
}

TEST(BuildCard, ApiKeyRequiredIsForcedTrue) {
  auto card = good();
  obj(card["security"])["api_key_required"] = false;
  auto r = build_card(card, build_facts());
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->at("security").at("api_key_required"), true);

  card.erase("security");
  r = build_card(card, build_facts());
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->at("security").at("api_key_required"), true);
}

TEST(BuildCard, DeclaredCardIsNotModified) {
  auto declared = good();
  auto copy = declared;
  ASSERT_TRUE(build_card(declared, build_facts()).has_value());
  EXPECT_EQ(declared, copy);
}

TEST(BuildCard, MinimalCardWithoutTools) {
  json::object card = json::parse(R"({"connector_card_id":"device.x","connector":{"name":"X","version":"1"},
                                      "supports":{"target_types":["device"],"profiles":["xagent.device.v1"]}})")
                          .as_object();
  auto r = build_card(card, build_facts());
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->at("security").at("api_key_required"), true);
  EXPECT_FALSE(r->contains("tools"));
}

TEST(BuildCard, BuiltCardPassesTheSpecSchema) {
  auto r = build_card(good(), build_facts());
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(test::schema_violations("xagent.connector.v1", json::serialize(*r)), "");
}

TEST(BuildCard, SchemaCheckerCatchesABrokenCard) {
  // Guards the guard: the checker must notice a card without its host fields.
  auto r = build_card(good(), build_facts());
  ASSERT_TRUE(r.has_value()) << r.error();
  r->erase("schema");
  EXPECT_NE(test::schema_violations("xagent.connector.v1", json::serialize(*r)), "");
}

// Identity ---------------------------------------------------------------------------------------------------

TEST(BuildCard, RelatedSkillIdsNameThisConnectorsSkill) {
  for (const char* other : {"connector-im-other", "im.sample", ""}) {
    expect_refused([&](auto& c) { c["tools"].as_array()[0].as_object()["related_skill_ids"] = json::array{other}; },
                   "tools[0].related_skill_ids");
  }
}

TEST(BuildCard, RefusesUnknownTopLevelField) {
  expect_refused([](auto& c) { c["server_base_url"] = "http://x"; }, "server_base_url");
  expect_refused([](auto& c) { c["schema"] = "xagent.connector/v1"; }, "schema");
  expect_refused([](auto& c) { c["build"] = json::object(); }, "build");
}

TEST(BuildCard, RefusesMissingOrBadCardId) {
  expect_refused([](auto& c) { c.erase("connector_card_id"); }, "connector_card_id");
  expect_refused([](auto& c) { c["connector_card_id"] = ""; }, "connector_card_id");
  expect_refused([](auto& c) { c["connector_card_id"] = "IM.Sample"; }, "connector_card_id");
  expect_refused([](auto& c) { c["connector_card_id"] = 5; }, "connector_card_id");
}

TEST(BuildCard, RefusesMissingConnectorFacts) {
  expect_refused([](auto& c) { c.erase("connector"); }, "connector");
  expect_refused([](auto& c) { obj(c["connector"]).erase("name"); }, "connector.name");
  expect_refused([](auto& c) { obj(c["connector"]).erase("version"); }, "connector.version");
  expect_refused([](auto& c) { obj(c["connector"])["version"] = ""; }, "connector.version");
  expect_refused([](auto& c) { obj(c["connector"])["homepage"] = "x"; }, "connector.homepage");
}

// Supports ---------------------------------------------------------------------------------------------------

TEST(BuildCard, RefusesEmptyTargetTypes) {
  expect_refused([](auto& c) { obj(c["supports"])["target_types"] = json::array(); }, "supports.target_types");
  expect_refused([](auto& c) { obj(c["supports"]).erase("target_types"); }, "supports.target_types");
}

TEST(BuildCard, RefusesUnknownTargetType) {
  expect_refused([](auto& c) { obj(c["supports"])["target_types"] = json::array{"im", "browser"}; },
                 "supports.target_types[1]");
}

TEST(BuildCard, AcceptsEveryCurrentTargetType) {
  auto card = good();
  obj(card["supports"])["target_types"] = json::array{"im", "email", "calendar", "ticket", "device"};
  EXPECT_TRUE(build_card(card, build_facts()).has_value());
}

TEST(BuildCard, RefusesEmptyProfiles) {
  expect_refused(
      [](auto& c) {
        obj(c["supports"])["profiles"] = json::array();
        c.erase("tools");
      },
      "supports.profiles");
  expect_refused([](auto& c) { obj(c["supports"]).erase("profiles"); }, "supports.profiles");
}

TEST(BuildCard, RefusesProfileNotMatchingTargetTypes) {
  expect_refused(
      [](auto& c) {
        obj(c["supports"])["target_types"] = json::array{"device"};
        obj(c["supports"])["profiles"] = json::array{"xagent.im.v2"};
        c.erase("tools");
        c.erase("auth_flows");
        obj(c["supports"]).erase("targets");
      },
      "supports.profiles[0]");
}

TEST(BuildCard, RefusesUnknownProfile) {
  expect_refused([](auto& c) { obj(c["supports"])["profiles"] = json::array{"xagent.im.v2", "xagent.browser.v1"}; },
                 "supports.profiles[1]");
}

TEST(BuildCard, RefusesBadUserChannelMode) {
  expect_refused([](auto& c) { obj(c["supports"])["user_channel_mode"] = "many"; }, "supports.user_channel_mode");
}

TEST(BuildCard, RefusesBadTargets) {
  expect_refused([](auto& c) { obj(c["supports"])["targets"].as_array()[0].as_object().erase("provider"); },
                 "supports.targets[0].provider");
  expect_refused([](auto& c) { obj(c["supports"])["targets"].as_array()[0].as_object()["target_type"] = "web"; },
                 "supports.targets[0].target_type");
}

// Tools ------------------------------------------------------------------------------------------------------

TEST(BuildCard, RefusesDuplicateToolIds) {
  expect_refused([](auto& c) { tool(c, 1)["tool_id"] = "sample_send"; }, "tools[1].tool_id");
}

TEST(BuildCard, RefusesBadToolIds) {
  expect_refused([](auto& c) { tool(c, 0)["tool_id"] = ""; }, "tools[0].tool_id");
  expect_refused([](auto& c) { tool(c, 0).erase("tool_id"); }, "tools[0].tool_id");
  expect_refused([](auto& c) { tool(c, 0)["tool_id"] = "send message"; }, "tools[0].tool_id");
  expect_refused([](auto& c) { tool(c, 0)["tool_id"] = "send/message"; }, "tools[0].tool_id");
  expect_refused([](auto& c) { tool(c, 1)["tool_id"] = "s\xC3\xA9nd"; }, "tools[1].tool_id");
  expect_refused([](auto& c) { tool(c, 0)["tool_id"] = std::string(257, 'a'); }, "tools[0].tool_id");
}

TEST(BuildCard, AcceptsToolIdOf256Chars) {
  auto card = good();
  tool(card, 0)["tool_id"] = std::string(256, 'a');
  auto r = build_card(card, build_facts());
  EXPECT_TRUE(r.has_value()) << r.error();
}

TEST(BuildCard, RefusesToolProfileNotInSupports) {
  expect_refused(
      [](auto& c) {
        obj(c["supports"])["profiles"] = json::array{"xagent.im.v1"};
      },
      "tools[0].profile");
  expect_refused([](auto& c) { tool(c, 1)["profile"] = "xagent.device.v1"; }, "tools[1].profile");
  expect_refused([](auto& c) { tool(c, 1).erase("profile"); }, "tools[1].profile");
}

TEST(BuildCard, RefusesInputSchemaThatIsNotAnObjectSchema) {
  expect_refused([](auto& c) { tool(c, 0).erase("input_schema"); }, "tools[0].input_schema");
  expect_refused([](auto& c) { tool(c, 0)["input_schema"] = "object"; }, "tools[0].input_schema");
  expect_refused([](auto& c) { obj(tool(c, 0)["input_schema"])["type"] = "array"; }, "tools[0].input_schema.type");
  expect_refused([](auto& c) { obj(tool(c, 0)["input_schema"]).erase("type"); }, "tools[0].input_schema.type");
  expect_refused([](auto& c) { obj(tool(c, 1)["input_schema"])["properties"] = json::array(); },
                 "tools[1].input_schema.properties");
}

TEST(BuildCard, RefusesDeclaredConnectorChannelId) {
  expect_refused(
      [](auto& c) {
        obj(obj(tool(c, 0)["input_schema"])["properties"])["connector_channel_id"] = json::object{{"type", "string"}};
      },
      "tools[0].input_schema");
  auto card = good();
  obj(obj(tool(card, 0)["input_schema"])["properties"])["connector_channel_id"] = json::object{{"type", "string"}};
  auto r = build_card(card, build_facts());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("connector_channel_id"), std::string::npos) << r.error();
}

TEST(BuildCard, RefusesDeclaredConnectorCardId) {
  auto card = good();
  obj(tool(card, 1)["input_schema"])["properties"] = json::object{{"connector_card_id", {{"type", "string"}}}};
  auto r = build_card(card, build_facts());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().rfind("tools[1].input_schema", 0), 0u) << r.error();
  EXPECT_NE(r.error().find("connector_card_id"), std::string::npos) << r.error();
}

TEST(BuildCard, RefusesRequiredNamingUndeclaredProperty) {
  expect_refused([](auto& c) { obj(tool(c, 0)["input_schema"])["required"] = json::array{"text", "subject"}; },
                 "tools[0].input_schema.required");
  // Not even the injected one may be named by hand.
  expect_refused([](auto& c) { obj(tool(c, 1)["input_schema"])["required"] = json::array{"connector_channel_id"}; },
                 "tools[1].input_schema.required");
  expect_refused([](auto& c) { obj(tool(c, 0)["input_schema"])["required"] = "text"; },
                 "tools[0].input_schema.required");
}

TEST(BuildCard, RefusesUnknownToolField) {
  expect_refused([](auto& c) { tool(c, 0)["handler"] = "x"; }, "tools[0].handler");
}

TEST(BuildCard, RefusesToolsThatAreNotAnArray) {
  expect_refused([](auto& c) { c["tools"] = json::object(); }, "tools");
  expect_refused([](auto& c) { c["tools"].as_array()[0] = "sample_send"; }, "tools[0]");
}

// Auth flows -------------------------------------------------------------------------------------------------

TEST(BuildCard, RefusesFormFlowWithoutFields) {
  expect_refused([](auto& c) { c["auth_flows"].as_array()[1].as_object().erase("fields"); },
                 "auth_flows[1].fields");
  expect_refused([](auto& c) { c["auth_flows"].as_array()[1].as_object()["fields"] = json::array(); },
                 "auth_flows[1].fields");
}

TEST(BuildCard, RefusesFieldsOnQrFlow) {
  expect_refused(
      [](auto& c) {
        c["auth_flows"].as_array()[0].as_object()["fields"] = c["auth_flows"].as_array()[1].as_object()["fields"];
      },
      "auth_flows[0].fields");
}

TEST(BuildCard, RefusesPasswordFieldWithoutSecret) {
  expect_refused([](auto& c) { field(c, 1, 0).erase("secret"); }, "auth_flows[1].fields[0].secret");
  expect_refused([](auto& c) { field(c, 1, 0)["secret"] = false; }, "auth_flows[1].fields[0].secret");
}

TEST(BuildCard, RefusesDefaultValueOnSecretField) {
  expect_refused([](auto& c) { field(c, 1, 0)["default_value"] = "hunter2"; },
                 "auth_flows[1].fields[0].default_value");
  expect_refused(
      [](auto& c) {
        field(c, 1, 1)["secret"] = true;  // a text field marked secret
      },
      "auth_flows[1].fields[1].default_value");
}

TEST(BuildCard, RefusesOtherAuthFlowMistakes) {
  expect_refused([](auto& c) { c["auth_flows"].as_array()[1].as_object()["id"] = "sample_qr"; }, "auth_flows[1].id");
  expect_refused([](auto& c) { c["auth_flows"].as_array()[0].as_object()["target_type"] = "email"; },
                 "auth_flows[0].target_type");
  expect_refused([](auto& c) { c["auth_flows"].as_array()[0].as_object()["type"] = "oauth"; }, "auth_flows[0].type");
  expect_refused([](auto& c) { c["auth_flows"].as_array()[0].as_object().erase("title"); }, "auth_flows[0].title");
  expect_refused([](auto& c) { field(c, 1, 1)["name"] = "token"; }, "auth_flows[1].fields[1].name");
  expect_refused([](auto& c) { field(c, 1, 1)["input_type"] = "checkbox"; }, "auth_flows[1].fields[1].input_type");
  expect_refused([](auto& c) { field(c, 1, 1)["required"] = "yes"; }, "auth_flows[1].fields[1].required");
  expect_refused([](auto& c) { field(c, 1, 1)["options"] = json::array(); }, "auth_flows[1].fields[1].options");
}

// Security and UI --------------------------------------------------------------------------------------------

TEST(BuildCard, RefusesBadTrustLevel) {
  expect_refused([](auto& c) { obj(c["security"])["trust_level"] = "trusted"; }, "security.trust_level");
  expect_refused([](auto& c) { obj(c["security"])["trust_level"] = 1; }, "security.trust_level");
}

TEST(BuildCard, AcceptsEveryTrustLevel) {
  for (auto level : {"unknown", "builtin", "verified", "third_party", "local"}) {
    auto card = good();
    obj(card["security"])["trust_level"] = level;
    auto r = build_card(card, build_facts());
    EXPECT_TRUE(r.has_value()) << level;
  }
}

TEST(BuildCard, RefusesOtherSecurityMistakes) {
  expect_refused([](auto& c) { c["security"] = "high"; }, "security");
  expect_refused([](auto& c) { obj(c["security"])["api_key"] = "xck_secret"; }, "security.api_key");
  expect_refused([](auto& c) { obj(c["security"])["data_classes"] = json::array{"message", "message"}; },
                 "security.data_classes[1]");
}

TEST(BuildCard, RefusesNonObjectUi) {
  expect_refused([](auto& c) { c["ui"] = json::array(); }, "ui");
}

}  // namespace
}  // namespace xconn
