// The telegram plugin's own rules, tested directly (plugins/telegram/*.hpp) and through its C ABI table: message
// parts of at most 4,096 UTF-16 units cut between code points, the masked chat id, sender names, Bot API URLs, and
// a config section refused with the key named (never its value).
#include "plugins/telegram/api_endpoint.hpp"
#include "plugins/telegram/telegram_text.hpp"
#include "support/abi_test_host.hpp"
#include "support/test_support.hpp"

#include <boost/dll/shared_library.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {
using namespace telegram;

std::string repeat(std::string_view piece, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += piece;
  return out;
}

TEST(TelegramText, PartsNeverPassTheLimitNorCutACodePointAndRejoinToTheText) {
  const std::string emoji = "\xF0\x9F\x98\x80";  // two UTF-16 units
  for (const std::string& text : {repeat("a", 4096), repeat("a", 4097), repeat(emoji, 2049), repeat("\xC3\xA9", 5000),
                                  "a" + repeat(emoji, 3000), std::string()}) {
    auto parts = split_text(text);
    std::string joined;
    for (const auto& p : parts) {
      EXPECT_LE(utf16_units(p), max_message_units);
      EXPECT_FALSE(p.empty());
      EXPECT_NE(static_cast<unsigned char>(p.front()) & 0xC0, 0x80) << "a part starts inside a code point";
      joined += p;
    }
    EXPECT_EQ(joined, text);
  }
  EXPECT_EQ(split_text(repeat("a", 4096)).size(), 1u);
  EXPECT_EQ(split_text(repeat(emoji, 2049)).size(), 2u);  // 4,098 units
}

TEST(TelegramText, ALongTextBreaksAfterANewlineOrASpaceInTheSecondHalf) {
  std::string text = repeat("a", 3000) + "\n" + repeat("b", 2000);
  auto parts = split_text(text);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], repeat("a", 3000) + "\n");
  auto words = split_text(repeat("word ", 1000) + "end");
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].back(), ' ') << "cut inside a word";
  EXPECT_EQ(words[1].substr(0, 4), "word");
}

TEST(TelegramText, TheHintMasksEveryDigitButTheFirstTwoAndLastTwo) {
  EXPECT_EQ(masked_chat_id("1234589"), "12***89");
  EXPECT_EQ(masked_chat_id("-1001234567890"), "-10*********90");
  EXPECT_EQ(masked_chat_id("42"), "42");
  EXPECT_EQ(masked_chat_id("12345"), "12*45");
  EXPECT_EQ(display_name("Ann", "Lee", "ann"), "Ann Lee");
  EXPECT_EQ(display_name("", "", "ann"), "ann");
  EXPECT_EQ(display_name("Ann", "", "ann"), "Ann");
}

TEST(TelegramApi, BaseUrlsParseAndHostileOnesAreRefused) {
  auto https = api_endpoint::parse("https://api.telegram.org");
  ASSERT_TRUE(https);
  EXPECT_TRUE(https->tls);
  EXPECT_EQ(https->port, "443");
  auto local = api_endpoint::parse("http://127.0.0.1:8081/tg/");
  ASSERT_TRUE(local);
  EXPECT_FALSE(local->tls);
  EXPECT_EQ(local->host, "127.0.0.1");
  EXPECT_EQ(local->port, "8081");
  EXPECT_EQ(local->base_path, "/tg");
  auto v6 = api_endpoint::parse("http://[::1]:9000");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  for (const char* bad : {"ftp://x", "https://", "http://host:port", "http://host:80/a b", "api.telegram.org",
                          "http://host/a?b", ""})
    EXPECT_FALSE(api_endpoint::parse(bad)) << bad;
}

class TelegramAbi : public ::testing::Test {
 protected:
  xconn::test::plugin_config_check validate{"telegram.so"};
};

TEST_F(TelegramAbi, TheConfigSectionIsCheckedKeyByKeyAndNeverQuotesAValue) {
  EXPECT_EQ(validate(R"({"config":{"api_base_url":"https://api.telegram.org","poll_timeout_s":30,"ca_file":"/x.pem"}})"), "");
  EXPECT_EQ(validate("{}"), "");
  EXPECT_EQ(validate(R"({"config":{"proxy":"http://127.0.0.1:3128"}})"), "");
  EXPECT_EQ(validate(R"({"config":{"proxy":"socks5://127.0.0.1:1080"}})"), "");
  EXPECT_EQ(validate(R"({"config":{"proxy":"socks5://user:pass@[::1]:1080"}})"), "");
  EXPECT_EQ(validate(R"({"config":{"proxy":"http://user:pass@proxy.example:3128"}})"), "");
  const std::string refused =
      "config.proxy: must be http://[user:password@]host:port or socks5://[user:password@]host:port";
  for (auto bad : {R"("https://user:planted@proxy:3128/x")", R"("")", R"("socks4://proxy:1080")",
                   R"("socks5://proxy")", R"("socks5://[::1]")", R"("socks5://planted@proxy:1080")",
                   R"("http://:planted@proxy:3128")", R"("http://proxy:3128/path")", R"(3128)"})
    EXPECT_EQ(validate(std::string(R"({"config":{"proxy":)") + bad + "}}"), refused) << bad;
  EXPECT_EQ(validate(R"({"config":{"poll_timeout_s":0}})"), "config.poll_timeout_s: must be an integer 1..50");
  EXPECT_EQ(validate(R"({"config":{"poll_timeout_s":51}})"), "config.poll_timeout_s: must be an integer 1..50");
  EXPECT_EQ(validate(R"({"config":{"poll_timeout_s":"30"}})"), "config.poll_timeout_s: must be an integer 1..50");
  EXPECT_EQ(validate(R"({"config":{"api_base_url":"gopher://secret-host"}})"),
            "config.api_base_url: must be an http:// or https:// URL");
  EXPECT_EQ(validate(R"({"config":{"bot_token":"123:planted"}})"), "config.bot_token: unknown key");
  EXPECT_EQ(validate(R"({"secrets":{}})"), "secrets: unknown group");
  EXPECT_EQ(validate(R"({"config":[]})"), "config: must be an object");
  EXPECT_EQ(validate("not json"), "section: must be a JSON object");
  EXPECT_EQ(validate(std::string(100000, '[')), "section: must be a JSON object");
}

}  // namespace
