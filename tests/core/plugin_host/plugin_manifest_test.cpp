#include "core/plugin_host/plugin_manifest.hpp"

#include "support/sample_manifest.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <functional>
#include <string>

namespace xconn {
namespace {
namespace json = boost::json;

// The shared sample: every edit below is made to a fresh copy of it.
json::object good() { return test::sample_manifest(); }
json::object& obj(json::value& v) { return v.as_object(); }
json::object& chat(json::object& m) { return m["chat"].as_object(); }

boost::system::result<plugin_manifest, std::string> parse(const json::object& m,
                                                          std::string_view build = test::sample_build_json) {
  return parse_manifest(json::serialize(m), build);
}

plugin_manifest parse_ok(const std::function<void(json::object&)>& edit) {
  auto m = good();
  edit(m);
  auto r = parse(m);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error()) << " for " << json::serialize(m);
  return r ? *r : plugin_manifest{};
}

// Expects a refusal whose message starts with `field_name`.
void expect_refused(const std::function<void(json::object&)>& edit, const std::string& field_name) {
  auto m = good();
  edit(m);
  auto r = parse(m);
  ASSERT_FALSE(r.has_value()) << "expected a refusal naming " << field_name << " for " << json::serialize(m);
  EXPECT_EQ(r.error().rfind(field_name, 0), 0u) << "error '" << r.error() << "' should name " << field_name;
}

std::string repeat(std::string_view unit, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += unit;
  return out;
}

const std::string e_acute = "\xC3\xA9";         // é, 2 bytes
const std::string cjk = "\xE4\xB8\xAD";          // 中, 3 bytes
const std::string emoji = "\xF0\x9F\x98\x80";    // 😀, 4 bytes

// The whole good manifest -------------------------------------------------------------------------------------

TEST(PluginManifest, ParsesAGoodManifest) {
  auto r = parse(good());
  ASSERT_TRUE(r.has_value()) << r.error();
  const auto& m = *r;
  EXPECT_EQ(m.id, "sample-1");
  EXPECT_EQ(m.card_id, "im.sample_bot");
  EXPECT_EQ(m.card_version, "1.2.3");
  EXPECT_EQ(m.build.at("build_time"), "2607241200");
  EXPECT_EQ(m.build.at("git_rev"), "abc1234");
  // The card is the built one: host fields added.
  EXPECT_EQ(m.card.at("schema"), "xagent.connector/v1");
  EXPECT_EQ(m.card.at("protocol_version"), "3.0");
  EXPECT_EQ(m.card.at("build"), json::value(m.build));
  EXPECT_EQ(m.card.at("security").at("api_key_required"), true);
  EXPECT_EQ(m.card.at("tools").at(0).at("input_schema").at("required").at(0), "connector_channel_id");
  // Every tool, with its options.
  ASSERT_EQ(m.tools.size(), 2u);
  EXPECT_TRUE(m.tools.at("sample_send").side_effect);
  EXPECT_EQ(m.tools.at("sample_send").timeout_ms, 2500);
  EXPECT_FALSE(m.tools.at("sample_status").side_effect);
  EXPECT_EQ(m.tools.at("sample_status").timeout_ms, 0);
  EXPECT_EQ(m.system_prompt, "Be brief.");
  ASSERT_TRUE(m.chat.has_value());
  EXPECT_EQ(m.chat->title, "Sample room");
  EXPECT_EQ(m.chat->roles.size(), 2u);
  EXPECT_EQ(m.chat->roles.at("host"), "Host");
  EXPECT_EQ(m.chat->max_length, 300);
  EXPECT_EQ(m.chat->max_per_minute, 4);
  // The capability without its live health.
  EXPECT_EQ(m.capability.at("adapter_id"), "sample");
  EXPECT_FALSE(m.capability.contains("health"));
}

TEST(PluginManifest, MinimalManifest) {
  auto m = parse_ok([](auto& m) {
    m.erase("tool_options");
    m.erase("skill");
    m.erase("system_prompt");
    m.erase("chat");
  });
  EXPECT_EQ(m.skill, "");
  EXPECT_EQ(m.system_prompt, "");
  EXPECT_FALSE(m.chat.has_value());
  EXPECT_EQ(m.tools.size(), 2u);
}

TEST(PluginManifest, NotJson) {
  auto r = parse_manifest("not json", test::sample_build_json);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().rfind("manifest", 0), 0u) << r.error();
  r = parse_manifest("[]", test::sample_build_json);
  ASSERT_FALSE(r.has_value());
  r = parse_manifest(test::sample_manifest_json, "nope");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().rfind("build", 0), 0u) << r.error();
}

TEST(PluginManifest, DeeplyNestedJsonIsRefusedNotACrash) {
  std::string deep = R"({"id":"x","card":)" + std::string(10000, '[') + std::string(10000, ']') + "}";
  EXPECT_FALSE(parse_manifest(deep, test::sample_build_json).has_value());
}

// id ----------------------------------------------------------------------------------------------------------

TEST(PluginManifest, IdRules) {
  expect_refused([](auto& m) { m.erase("id"); }, "id");
  expect_refused([](auto& m) { m["id"] = ""; }, "id");
  expect_refused([](auto& m) { m["id"] = "Sample"; }, "id");
  expect_refused([](auto& m) { m["id"] = "sample_1"; }, "id");
  expect_refused([](auto& m) { m["id"] = "sam ple"; }, "id");
  expect_refused([](auto& m) { m["id"] = "../x"; }, "id");
  expect_refused([](auto& m) { m["id"] = std::string(33, 'a'); }, "id");
  expect_refused([](auto& m) { m["id"] = 7; }, "id");
  EXPECT_EQ(parse_ok([](auto& m) { m["id"] = std::string(32, 'a'); }).id, std::string(32, 'a'));
  EXPECT_EQ(parse_ok([](auto& m) { m["id"] = "a"; }).id, "a");
}

TEST(PluginManifest, ValidPluginId) {
  EXPECT_TRUE(valid_plugin_id("echo"));
  EXPECT_TRUE(valid_plugin_id("a"));
  EXPECT_TRUE(valid_plugin_id("my-plugin-2"));
  EXPECT_TRUE(valid_plugin_id("0"));
  EXPECT_TRUE(valid_plugin_id(std::string(32, 'z')));
  EXPECT_FALSE(valid_plugin_id(""));
  EXPECT_FALSE(valid_plugin_id(std::string(33, 'z')));
  EXPECT_FALSE(valid_plugin_id("Echo"));
  EXPECT_FALSE(valid_plugin_id("echo_1"));
  EXPECT_FALSE(valid_plugin_id("echo.so"));
  EXPECT_FALSE(valid_plugin_id("a/b"));
  EXPECT_FALSE(valid_plugin_id("a b"));
  EXPECT_FALSE(valid_plugin_id(std::string("ab\0c", 4)));
  EXPECT_FALSE(valid_plugin_id("\xC3\xA9"));
}

// Unknown fields ----------------------------------------------------------------------------------------------

TEST(PluginManifest, UnknownFieldsAreRefused) {
  expect_refused([](auto& m) { m["version"] = "1"; }, "version");
  expect_refused([](auto& m) { chat(m)["color"] = "red"; }, "chat.color");
  expect_refused([](auto& m) { obj(m["card"])["extra"] = 1; }, "card.extra");
}

TEST(PluginManifest, CardErrorsAreNamedUnderCard) {
  expect_refused([](auto& m) { m.erase("card"); }, "card");
  expect_refused([](auto& m) { m["card"] = "im.sample"; }, "card");
  expect_refused([](auto& m) { obj(m["card"])["tools"].as_array()[1].as_object()["tool_id"] = "sample_send"; },
                 "card.tools[1].tool_id");
}

// chat --------------------------------------------------------------------------------------------------------

TEST(PluginManifestChat, NotAnObject) {
  expect_refused([](auto& m) { m["chat"] = "room"; }, "chat");
  EXPECT_FALSE(parse_ok([](auto& m) { m["chat"] = nullptr; }).chat.has_value());
}

TEST(PluginManifestChat, Defaults) {
  auto m = parse_ok([](auto& m) { m["chat"] = {{"title", "Room"}}; });
  ASSERT_TRUE(m.chat.has_value());
  EXPECT_EQ(m.chat->title, "Room");
  EXPECT_TRUE(m.chat->roles.empty());
  EXPECT_EQ(m.chat->max_length, 500);
  EXPECT_EQ(m.chat->max_per_minute, 6);
}

TEST(PluginManifestChat, TitleLength) {
  expect_refused([](auto& m) { chat(m).erase("title"); }, "chat.title");
  expect_refused([](auto& m) { chat(m)["title"] = ""; }, "chat.title");
  expect_refused([](auto& m) { chat(m)["title"] = 5; }, "chat.title");
  expect_refused([](auto& m) { chat(m)["title"] = std::string(81, 'x'); }, "chat.title");
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["title"] = std::string(80, 'x'); }).chat->title, std::string(80, 'x'));
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["title"] = "x"; }).chat->title, "x");
}

TEST(PluginManifestChat, TitleCountsCodePointsNotBytes) {
  for (const auto& unit : {e_acute, cjk, emoji}) {
    auto title = repeat(unit, 80);  // 160-320 bytes, 80 code points
    EXPECT_EQ(parse_ok([&](auto& m) { chat(m)["title"] = title; }).chat->title, title);
    expect_refused([&](auto& m) { chat(m)["title"] = repeat(unit, 81); }, "chat.title");
  }
  EXPECT_TRUE(parse_ok([&](auto& m) { chat(m)["title"] = emoji; }).chat.has_value());
}

TEST(PluginManifestChat, Roles) {
  auto many = [](std::size_t n) {
    json::object roles;
    for (std::size_t i = 0; i < n; ++i) roles["role" + std::to_string(i)] = "Label " + std::to_string(i);
    return roles;
  };
  EXPECT_EQ(parse_ok([&](auto& m) { chat(m)["roles"] = many(16); }).chat->roles.size(), 16u);
  expect_refused([&](auto& m) { chat(m)["roles"] = many(17); }, "chat.roles");
  expect_refused([](auto& m) { chat(m)["roles"] = json::array{"host"}; }, "chat.roles");
  expect_refused([](auto& m) { chat(m)["roles"] = {{"Host", "Host"}}; }, "chat.roles.Host");
  expect_refused([](auto& m) { chat(m)["roles"] = {{"", "Nobody"}}; }, "chat.roles");
  expect_refused([](auto& m) { chat(m)["roles"] = {{"the host", "Host"}}; }, "chat.roles.the host");
  expect_refused([](auto& m) { chat(m)["roles"] = {{"host", ""}}; }, "chat.roles.host");
  expect_refused([](auto& m) { chat(m)["roles"] = {{"host", 3}}; }, "chat.roles.host");
  expect_refused([](auto& m) { chat(m)["roles"] = {{"host", std::string(25, 'h')}}; }, "chat.roles.host");
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["roles"] = {{"host", std::string(24, 'h')}}; }).chat->roles.at("host"),
            std::string(24, 'h'));
  // Labels count code points too.
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["roles"] = {{"self", repeat(cjk, 24)}}; }).chat->roles.at("self"),
            repeat(cjk, 24));
  expect_refused([](auto& m) { chat(m)["roles"] = {{"self", repeat(cjk, 25)}}; }, "chat.roles.self");
}

TEST(PluginManifestChat, MaxLength) {
  expect_refused([](auto& m) { chat(m)["max_length"] = 0; }, "chat.max_length");
  expect_refused([](auto& m) { chat(m)["max_length"] = 4001; }, "chat.max_length");
  expect_refused([](auto& m) { chat(m)["max_length"] = -5; }, "chat.max_length");
  expect_refused([](auto& m) { chat(m)["max_length"] = "500"; }, "chat.max_length");
  expect_refused([](auto& m) { chat(m)["max_length"] = 12.5; }, "chat.max_length");
  expect_refused([](auto& m) { chat(m)["max_length"] = 18446744073709551615ull; }, "chat.max_length");
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["max_length"] = 1; }).chat->max_length, 1);
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["max_length"] = 4000; }).chat->max_length, 4000);
}

TEST(PluginManifestChat, MaxPerMinute) {
  // 0 is a plugin that paces its target itself (plugin_chat_limits_manifest_test.cpp); below it, refused.
  expect_refused([](auto& m) { chat(m)["max_per_minute"] = -1; }, "chat.max_per_minute");
  expect_refused([](auto& m) { chat(m)["max_per_minute"] = 31; }, "chat.max_per_minute");
  expect_refused([](auto& m) { chat(m)["max_per_minute"] = true; }, "chat.max_per_minute");
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["max_per_minute"] = 1; }).chat->max_per_minute, 1);
  EXPECT_EQ(parse_ok([](auto& m) { chat(m)["max_per_minute"] = 30; }).chat->max_per_minute, 30);
}

// system_prompt -----------------------------------------------------------------------------------------------

TEST(PluginManifest, SystemPromptLength) {
  EXPECT_EQ(parse_ok([](auto& m) { m["system_prompt"] = std::string(4000, 'p'); }).system_prompt.size(), 4000u);
  expect_refused([](auto& m) { m["system_prompt"] = std::string(4001, 'p'); }, "system_prompt");
  // Code points, not bytes: 4000 three-byte characters are fine, 4001 are not.
  EXPECT_EQ(parse_ok([](auto& m) { m["system_prompt"] = repeat(cjk, 4000); }).system_prompt, repeat(cjk, 4000));
  expect_refused([](auto& m) { m["system_prompt"] = repeat(cjk, 4001); }, "system_prompt");
  expect_refused([](auto& m) { m["system_prompt"] = json::array(); }, "system_prompt");
}

// skill -------------------------------------------------------------------------------------------------------

TEST(PluginManifest, SkillNameFor) {
  EXPECT_EQ(skill_name_for("im.echo"), "connector-im-echo");
  EXPECT_EQ(skill_name_for("im.wechat"), "connector-im-wechat");
  EXPECT_EQ(skill_name_for("device.adb"), "connector-device-adb");
  EXPECT_EQ(skill_name_for("im.sample_bot"), "connector-im-sample-bot");
  EXPECT_EQ(skill_name_for("a.b_c-d"), "connector-a-b-c-d");
  EXPECT_EQ(skill_name_for(""), "connector-");
}

TEST(PluginManifest, SkillHeaderNameMustMatchTheCard) {
  expect_refused([](auto& m) { m["skill"] = "---\nname: connector-im-sample_bot\n---\nx\n"; }, "skill");
  expect_refused([](auto& m) { m["skill"] = "---\nname: connector-im.sample-bot\n---\nx\n"; }, "skill");
  expect_refused([](auto& m) { m["skill"] = "---\nname: im-connector-reply\n---\nx\n"; }, "skill");
  expect_refused([](auto& m) { m["skill"] = "---\nname: connector-im-sample-bot-extra\n---\nx\n"; }, "skill");
  expect_refused([](auto& m) { m["skill"] = "# No header\nname: connector-im-sample-bot\n"; }, "skill");
  expect_refused([](auto& m) { m["skill"] = "---\ndescription: no name\n---\nx\n"; }, "skill");
  expect_refused([](auto& m) { m["skill"] = 3; }, "skill");
  auto m = good();
  m["skill"] = "---\nname: connector-im-other\n---\n";
  auto r = parse(m);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("connector-im-sample-bot"), std::string::npos) << "should say the expected name";
}

TEST(PluginManifest, SkillNameOnlyCountsInsideTheHeader) {
  // A `name:` line in the body, after the header closed, is not the header's name.
  expect_refused(
      [](auto& m) { m["skill"] = "---\ndescription: no name\n---\nname: connector-im-sample-bot\nbody\n"; },
      "skill");
}

TEST(PluginManifest, SkillHeaderAcceptsNameAnywhereInTheHeader) {
  auto m = parse_ok([](auto& m) {
    m["skill"] = "---\ndescription: first\nname: connector-im-sample-bot  \n---\nBody.\n";
    m.erase("system_prompt");
    m.erase("chat");
  });
  EXPECT_EQ(m.skill, "---\ndescription: first\nname: connector-im-sample-bot  \n---\nBody.\n");
  auto crlf = parse_ok([](auto& m) {
    m["skill"] = "---\r\nname: connector-im-sample-bot\r\n---\r\nBody.\r\n";
    m.erase("system_prompt");
    m.erase("chat");
  });
  EXPECT_EQ(crlf.skill.rfind("---\r\nname: connector-im-sample-bot", 0), 0u);
}

TEST(PluginManifest, SkillIsComposedWithSystemPromptAndChat) {
  auto r = parse(good());
  ASSERT_TRUE(r.has_value()) << r.error();
  const auto& skill = r->skill;
  // The plugin's text first, unchanged.
  EXPECT_EQ(skill.rfind("---\nname: connector-im-sample-bot\ndescription: How to use Sample.\n---\nUse sample_send", 0),
            0u)
      << skill;
  auto prompt = skill.find("Be brief.");
  auto title = skill.find("Sample room");
  ASSERT_NE(prompt, std::string::npos) << skill;
  ASSERT_NE(title, std::string::npos) << skill;
  EXPECT_LT(prompt, title);
  EXPECT_NE(skill.find("`host`: Host"), std::string::npos) << skill;
  EXPECT_NE(skill.find("`viewer`: Viewer"), std::string::npos) << skill;
  EXPECT_NE(skill.find("300"), std::string::npos) << skill;
  EXPECT_NE(skill.find("4 per minute"), std::string::npos) << skill;
}

TEST(PluginManifest, SkillIsMadeWhenOnlyPromptOrChatIsGiven) {
  auto prompt_only = parse_ok([](auto& m) {
    m.erase("skill");
    m.erase("chat");
  });
  EXPECT_EQ(prompt_only.skill.rfind("---\nname: connector-im-sample-bot\n", 0), 0u) << prompt_only.skill;
  EXPECT_NE(prompt_only.skill.find("Be brief."), std::string::npos);

  auto chat_only = parse_ok([](auto& m) {
    m.erase("skill");
    m.erase("system_prompt");
  });
  EXPECT_EQ(chat_only.skill.rfind("---\nname: connector-im-sample-bot\n", 0), 0u) << chat_only.skill;
  EXPECT_NE(chat_only.skill.find("Sample room"), std::string::npos);

  auto skill_only = parse_ok([](auto& m) {
    m.erase("system_prompt");
    m.erase("chat");
  });
  EXPECT_EQ(skill_only.skill, good().at("skill").as_string());
}

// tool_options ------------------------------------------------------------------------------------------------

TEST(PluginManifest, ToolOptions) {
  expect_refused([](auto& m) { obj(m["tool_options"])["sample_delete"] = {{"side_effect", true}}; },
                 "tool_options.sample_delete");
  expect_refused([](auto& m) { m["tool_options"] = json::array(); }, "tool_options");
  expect_refused([](auto& m) { obj(m["tool_options"])["sample_send"] = true; }, "tool_options.sample_send");
  expect_refused([](auto& m) { obj(m["tool_options"])["sample_send"] = {{"retries", 3}}; },
                 "tool_options.sample_send.retries");
  expect_refused([](auto& m) { obj(m["tool_options"])["sample_send"] = {{"timeout_ms", 0}}; },
                 "tool_options.sample_send.timeout_ms");
  expect_refused([](auto& m) { obj(m["tool_options"])["sample_send"] = {{"timeout_ms", 3600001}}; },
                 "tool_options.sample_send.timeout_ms");
  expect_refused([](auto& m) { obj(m["tool_options"])["sample_send"] = {{"side_effect", "yes"}}; },
                 "tool_options.sample_send.side_effect");
  expect_refused([](auto& m) { obj(m["tool_options"])["sample_send"] = {{"non_blocking", 1}}; },
                 "tool_options.sample_send.non_blocking");
  auto m = parse_ok([](auto& m) {
    obj(m["tool_options"])["sample_status"] = {{"timeout_ms", 3600000}, {"non_blocking", true}};
  });
  EXPECT_EQ(m.tools.at("sample_status").timeout_ms, 3600000);
  EXPECT_TRUE(m.tools.at("sample_status").non_blocking);
  EXPECT_FALSE(m.tools.at("sample_send").non_blocking);  // unless declared
}

// capability --------------------------------------------------------------------------------------------------

TEST(PluginManifest, CapabilityRequiredFields) {
  expect_refused([](auto& m) { m.erase("capability"); }, "capability");
  expect_refused([](auto& m) { m["capability"] = "x"; }, "capability");
  expect_refused([](auto& m) { obj(m["capability"]).erase("adapter_id"); }, "capability.adapter_id");
  expect_refused([](auto& m) { obj(m["capability"])["adapter_id"] = ""; }, "capability.adapter_id");
  expect_refused([](auto& m) { obj(m["capability"]).erase("adapter_version"); }, "capability.adapter_version");
  expect_refused([](auto& m) { obj(m["capability"]).erase("supported_targets"); }, "capability.supported_targets");
  expect_refused([](auto& m) { obj(m["capability"])["supported_targets"] = "sample"; },
                 "capability.supported_targets");
  expect_refused([](auto& m) { obj(m["capability"])["supported_features"] = json::array{1}; },
                 "capability.supported_features");
  expect_refused([](auto& m) { obj(m["capability"]).erase("supported_features"); }, "capability.supported_features");
}

// build facts -------------------------------------------------------------------------------------------------

TEST(PluginManifest, BuildFacts) {
  auto no_time = parse(good(), R"({"version":"0.0.7","git_tag":"v0.0.7","git_rev":"abc1234"})");
  ASSERT_FALSE(no_time.has_value());
  EXPECT_EQ(no_time.error().rfind("build.build_time", 0), 0u) << no_time.error();
  auto numeric_time = parse(good(), R"({"build_time":2607241200})");
  ASSERT_FALSE(numeric_time.has_value());
  EXPECT_EQ(numeric_time.error().rfind("build.build_time", 0), 0u) << numeric_time.error();
  auto bad_rev = parse(good(), R"({"build_time":"2607241200","git_rev":7})");
  ASSERT_FALSE(bad_rev.has_value());
  EXPECT_EQ(bad_rev.error().rfind("build.git_rev", 0), 0u) << bad_rev.error();
  auto minimal = parse(good(), R"({"build_time":"2607241200"})");
  ASSERT_TRUE(minimal.has_value()) << minimal.error();
  EXPECT_EQ(minimal->card.at("build"), (json::object{{"build_time", "2607241200"}}));
}

}  // namespace
}  // namespace xconn
