// chat's declarations of the limits a target really has (docs/plugin-api.md, "chat"): max_per_minute 0 for a plugin
// that paces its target itself, length_unit for a bound in bytes or UTF-16 units, what older manifests keep meaning,
// the values refused, and the one sentence the served skill makes of them.
#include "core/plugin_host/plugin_manifest.hpp"
#include "core/plugin_host/served_skill.hpp"

#include "support/sample_manifest.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <functional>
#include <string>

namespace xconn::chat_limits_manifest_test {
namespace json = boost::json;

boost::system::result<plugin_manifest, std::string> parse_with(const std::function<void(json::object&)>& edit) {
  auto m = test::sample_manifest();
  edit(m);
  return parse_manifest(json::serialize(m), test::sample_build_json);
}

chat_limits chat_of(const std::function<void(json::object& chat)>& edit) {
  auto r = parse_with([&](json::object& m) { edit(m["chat"].as_object()); });
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r && r->chat ? *r->chat : chat_limits{};
}

// The refusal's message, which must start with the field's name ("" and a failure when it was accepted).
std::string refusal(const std::function<void(json::object& chat)>& edit, const std::string& field) {
  auto r = parse_with([&](json::object& m) { edit(m["chat"].as_object()); });
  EXPECT_FALSE(r.has_value()) << "accepted, expected a refusal naming " << field;
  if (r) return "";
  EXPECT_EQ(r.error().rfind(field, 0), 0u) << r.error();
  return r.error();
}

TEST(ChatLimitsManifest, MaxPerMinuteZeroIsAPluginThatPacesItselfAndAbsentStillMeansSix) {
  EXPECT_EQ(chat_of([](auto& c) { c["max_per_minute"] = 0; }).max_per_minute, 0);
  EXPECT_EQ(chat_of([](auto& c) { c.erase("max_per_minute"); }).max_per_minute, 6);
  EXPECT_EQ(chat_of([](auto& c) { c["max_per_minute"] = 1; }).max_per_minute, 1);
  EXPECT_EQ(chat_of([](auto& c) { c["max_per_minute"] = 30; }).max_per_minute, 30);
}

TEST(ChatLimitsManifest, MaxPerMinuteBadValuesAreRefusedAndTheMessageSaysWhatZeroMeans) {
  auto below = refusal([](auto& c) { c["max_per_minute"] = -1; }, "chat.max_per_minute");
  EXPECT_NE(below.find("0-30"), std::string::npos) << below;
  EXPECT_NE(below.find("paces"), std::string::npos) << below;
  refusal([](auto& c) { c["max_per_minute"] = 31; }, "chat.max_per_minute");
  refusal([](auto& c) { c["max_per_minute"] = "0"; }, "chat.max_per_minute");
  refusal([](auto& c) { c["max_per_minute"] = 0.0; }, "chat.max_per_minute");
  refusal([](auto& c) { c["max_per_minute"] = false; }, "chat.max_per_minute");
  refusal([](auto& c) { c["max_per_minute"] = nullptr; }, "chat.max_per_minute");
  refusal([](auto& c) { c["max_per_minute"] = json::array{0}; }, "chat.max_per_minute");
}

TEST(ChatLimitsManifest, LengthUnitIsCharactersUnlessBytesOrUtf16UnitsAreDeclared) {
  EXPECT_EQ(chat_of([](auto&) {}).unit, length_unit::characters);
  EXPECT_EQ(chat_of([](auto& c) { c["length_unit"] = "characters"; }).unit, length_unit::characters);
  EXPECT_EQ(chat_of([](auto& c) { c["length_unit"] = "bytes"; }).unit, length_unit::bytes);
  EXPECT_EQ(chat_of([](auto& c) { c["length_unit"] = "utf16_units"; }).unit, length_unit::utf16_units);
  for (json::value bad : {json::value("Bytes"), json::value("code_points"), json::value(""), json::value(1),
                          json::value(nullptr), json::value(json::array{"bytes"})})
    refusal([&](auto& c) { c["length_unit"] = bad; }, "chat.length_unit");
}

TEST(ChatLimitsManifest, MaxLengthRangeFollowsTheUnitWhereverItStandsInTheObject) {
  // Seed 002's 1-4000 for characters, as before.
  EXPECT_EQ(chat_of([](auto& c) { c["max_length"] = 4000; }).max_length, 4000);
  EXPECT_NE(refusal([](auto& c) { c["max_length"] = 4001; }, "chat.max_length").find("characters"), std::string::npos);
  // Bytes or UTF-16 units up to 64 KiB: Telegram's 4,096 can be said as it is; the unit may follow max_length.
  auto telegram = chat_of([](auto& c) {
    c["max_length"] = 4096;
    c["length_unit"] = "utf16_units";
  });
  EXPECT_EQ(telegram.max_length, 4096);
  EXPECT_EQ(telegram.unit, length_unit::utf16_units);
  EXPECT_EQ(chat_of([](auto& c) { c["length_unit"] = "bytes"; c["max_length"] = 65536; }).max_length, 65536);
  auto over = refusal([](auto& c) { c["length_unit"] = "bytes"; c["max_length"] = 65537; }, "chat.max_length");
  EXPECT_NE(over.find("1-65536 bytes"), std::string::npos) << over;
  refusal([](auto& c) { c["length_unit"] = "bytes"; c["max_length"] = 0; }, "chat.max_length");
  refusal([](auto& c) { c["length_unit"] = "utf16_units"; c["max_length"] = -1; }, "chat.max_length");
}

// The sentence the host adds to the served skill -------------------------------------------------------------

TEST(ChatLimitsManifest, AnOlderManifestKeepsItsSentence) {
  auto r = parse_with([](auto&) {});
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_NE(r->skill.find("\nReplies are at most 300 characters, at most 4 per minute.\n"), std::string::npos)
      << r->skill;
}

TEST(ChatLimitsManifest, TheSentenceStatesTheDeclaredUnitSplittingAndPace) {
  chat_limits c;
  c.max_length = 400;
  c.unit = length_unit::bytes;
  c.max_per_minute = 0;
  EXPECT_EQ(reply_limits_sentence(c, true),
            "A reply goes out in messages of at most 400 bytes each; the connector paces how fast they go out, with "
            "no cap per minute.");
  c.max_per_minute = 6;
  EXPECT_EQ(reply_limits_sentence(c, true),
            "A reply goes out in messages of at most 400 bytes each, at most 6 replies per minute.");
  c.unit = length_unit::utf16_units;
  c.max_length = 4096;
  EXPECT_EQ(reply_limits_sentence(c, false), "Replies are at most 4096 UTF-16 code units, at most 6 per minute.");
  c.unit = length_unit::characters;
  c.max_length = 500;
  c.max_per_minute = 0;
  EXPECT_EQ(reply_limits_sentence(c, false),
            "Replies are at most 500 characters; the connector paces how fast they go out, with no cap per minute.");
}

TEST(ChatLimitsManifest, TheServedSkillSaysWhatTheManifestDeclares) {
  auto r = parse_with([](auto& m) {
    m["chat"].as_object()["length_unit"] = "bytes";
    m["chat"].as_object()["max_per_minute"] = 0;
    m["delivery"] = {{"can_split", true}};
  });
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_NE(r->skill.find("messages of at most 300 bytes each; the connector paces"), std::string::npos) << r->skill;
  EXPECT_EQ(r->skill.find("at most 4"), std::string::npos) << r->skill;  // no cap is stated
  EXPECT_EQ(r->skill.find("characters"), std::string::npos) << r->skill;
}

}  // namespace xconn::chat_limits_manifest_test
