// One truth for a reply's length: every reply bound the served skill names, in the plugin's own text or in the
// host's sentence, is the bound its manifest declares (chat.max_length in chat.length_unit), read from the real
// built plugins through their C ABI and parsed by the host's own manifest parser. A plugin without chat names none.
#include "core/plugin_host/plugin_manifest.hpp"
#include "core/plugin_host/served_skill.hpp"
#include "plugins/irc/irc_text.hpp"
#include "plugins/telegram/telegram_text.hpp"
#include "plugins/wechat/wechat_text.hpp"
#include "support/abi_test_host.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace xconn::skill_reply_bound_test {
namespace json = boost::json;
namespace dll = boost::dll;

struct named_bound {
  long value = 0;
  length_unit unit = length_unit::characters;
  std::string sentence;
};

// The reply bounds a Markdown text names: "<number> bytes|characters|code points|UTF-16 code units" in a sentence
// about replies, messages or lines. Code spans are left out first, so a tool argument's bound ("`code` ... 1 to 64
// characters") is not one; so is a number in a sentence about anything else.
std::vector<named_bound> reply_bounds_named(const std::string& markdown) {
  static const std::regex code_span("`[^`\n]*`");
  static const std::regex sentence_end(R"((\.|;|:)\s+|\n\s*\n|\n- |\n#+ )");
  static const std::regex about_replies(R"(\b(repl(y|ies)|messages?|lines?)\b)", std::regex::icase);
  static const std::regex bound(R"((\d[\d,]*)\s+(bytes|characters|code points|UTF-16 code units|code units)\b)");
  std::string text = std::regex_replace(markdown, code_span, "");
  std::vector<named_bound> out;
  for (std::sregex_token_iterator it(text.begin(), text.end(), sentence_end, -1), end; it != end; ++it) {
    std::string sentence = *it;
    if (!std::regex_search(sentence, about_replies)) continue;
    for (std::sregex_iterator m(sentence.begin(), sentence.end(), bound), none; m != none; ++m) {
      std::string digits;
      for (char c : (*m)[1].str())
        if (c != ',') digits += c;
      std::string word = (*m)[2];
      auto unit = word == "bytes"                                    ? length_unit::bytes
                  : word == "characters" || word == "code points" ? length_unit::characters
                                                                     : length_unit::utf16_units;
      out.push_back({std::stol(digits), unit, sentence});
    }
  }
  return out;
}

struct loaded_manifest {
  json::object raw;         // what the plugin declares
  plugin_manifest parsed;   // what the host makes of it (the served skill among it)
};

loaded_manifest load(const std::string& file) {
  dll::shared_library lib = test::open_plugin(test::plugin_dir() / file);
  auto* api = test::entry(lib);
  std::string manifest(test::view(api->manifest_json)), build(test::view(api->build_json));
  auto parsed = parse_manifest(manifest, build);
  EXPECT_TRUE(parsed.has_value()) << file << ": " << (parsed ? "" : parsed.error());
  return {json::parse(manifest).as_object(), parsed ? *parsed : plugin_manifest{}};
}

// Every bound the served skill names is the manifest's; with chat, the host's sentence is there once. The plugin's
// own text (skill and system prompt) is checked on its own as well, so a disagreement says whose it is.
void expect_one_reply_bound(const std::string& file) {
  SCOPED_TRACE(file);
  auto m = load(file);
  std::string own;
  for (auto key : {"skill", "system_prompt"})
    if (auto* v = m.raw.if_contains(key); v && v->is_string()) own += std::string(v->as_string()) + "\n\n";
  const auto& chat = m.parsed.chat;
  for (const auto* text : {&own, &m.parsed.skill}) {
    for (const auto& b : reply_bounds_named(*text)) {
      ASSERT_TRUE(chat) << "names a reply bound although the manifest declares no chat: " << b.sentence;
      EXPECT_EQ(b.value, chat->max_length) << b.sentence;
      EXPECT_EQ(b.unit, chat->unit) << "the manifest counts in " << manifest_word(chat->unit) << ": " << b.sentence;
    }
  }
  if (chat) {
    auto sentence = reply_limits_sentence(*chat, m.parsed.delivery.can_split);
    EXPECT_NE(m.parsed.skill.find(sentence), std::string::npos) << m.parsed.skill;
  } else {
    EXPECT_TRUE(reply_bounds_named(m.parsed.skill).empty()) << m.parsed.skill;
  }
}

TEST(SkillReplyBound, TheCheckerFindsReplyBoundsAndOnlyThose) {
  auto irc_like = reply_bounds_named("- Keep replies short. A longer line is split into messages of at most 400 bytes, "
                                     "and lines go out at a limited rate.\n");
  ASSERT_EQ(irc_like.size(), 1u);
  EXPECT_EQ(irc_like[0].value, 400);
  EXPECT_EQ(irc_like[0].unit, length_unit::bytes);
  auto telegram_like = reply_bounds_named("A long reply is split into several messages of at most 4,096 characters.");
  ASSERT_EQ(telegram_like.size(), 1u);
  EXPECT_EQ(telegram_like[0].value, 4096);
  EXPECT_EQ(telegram_like[0].unit, length_unit::characters);
  auto host = reply_bounds_named("\nReplies are at most 500 characters, at most 6 per minute.\n");
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0].value, 500);
  // A tool argument's bound, a count of replies, and a number in a sentence about something else are none.
  EXPECT_TRUE(reply_bounds_named("- `echo_fail` with `code` (lowercase letters, digits, `_`, `.`, `-`; 1 to 64 "
                                 "characters) always fails with that error code.\n")
                  .empty());
  EXPECT_TRUE(reply_bounds_named("A file name of up to 255 bytes is kept. At most 6 replies per minute.").empty());
  EXPECT_EQ(reply_bounds_named("Replies are at most 4096 UTF-16 code units.")[0].unit, length_unit::utf16_units);
}

// IRC: the skill's own "400 bytes" is the manifest's chat (max_length 400, length_unit bytes), which is the
// splitter's own bound; before, the host said "500 characters" beside it.
TEST(SkillReplyBound, IrcNamesOneBoundTheSplittersInBytes) {
  expect_one_reply_bound("irc.so");
  auto m = load("irc.so");
  ASSERT_TRUE(m.parsed.chat);
  EXPECT_EQ(m.parsed.chat->max_length, static_cast<int>(irc::max_body_bytes));
  EXPECT_EQ(m.parsed.chat->unit, length_unit::bytes);
  EXPECT_EQ(m.parsed.chat->max_per_minute, 0);  // its own pacing governs
  std::string own(m.raw.at("skill").as_string());
  EXPECT_FALSE(reply_bounds_named(own).empty()) << "the IRC skill should keep telling the agent its line bound";
}

// Echo declares no chat: its peer takes any reply, and neither the host nor SKILL.md names a bound.
TEST(SkillReplyBound, EchoNamesNone) {
  expect_one_reply_bound("echo.so");
  EXPECT_FALSE(load("echo.so").parsed.chat.has_value());
}

// Telegram: its skill's 4,096 UTF-16 code units is its manifest's chat (max_length 4096, length_unit utf16_units),
// which is Telegram's own limit and its splitter's bound; before, it declared 4,000 characters.
TEST(SkillReplyBound, TelegramNamesOneBoundTelegramsOwnInUtf16Units) {
  expect_one_reply_bound("telegram.so");
  auto m = load("telegram.so");
  ASSERT_TRUE(m.parsed.chat);
  EXPECT_EQ(m.parsed.chat->max_length, static_cast<int>(telegram::max_message_units));
  EXPECT_EQ(m.parsed.chat->unit, length_unit::utf16_units);
  EXPECT_TRUE(m.parsed.delivery.can_split);
  std::string own(m.raw.at("skill").as_string());
  EXPECT_FALSE(reply_bounds_named(own).empty()) << "the Telegram skill should keep telling the agent its bound";
}

TEST(SkillReplyBound, WechatNamesOneBoundItsSplittersInCodePoints) {
  expect_one_reply_bound("wechat.so");
  auto m = load("wechat.so");
  ASSERT_TRUE(m.parsed.chat);
  EXPECT_EQ(m.parsed.chat->max_length, static_cast<int>(wechat::max_part_code_points));
  EXPECT_EQ(m.parsed.chat->unit, length_unit::characters);
  EXPECT_TRUE(m.parsed.delivery.can_split);
  std::string own(m.raw.at("skill").as_string());
  EXPECT_FALSE(reply_bounds_named(own).empty()) << "the WeChat skill should keep telling the agent its bound";
}

}  // namespace xconn::skill_reply_bound_test
