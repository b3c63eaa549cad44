// The telegram plugin's own rules, tested directly (plugins/telegram/*.hpp) and through its C ABI table: message
// parts of at most 4,096 UTF-16 units cut between code points, the masked chat id, sender names, Bot API URLs, and
// a config section refused with the key named (never its value), which Bot API answers are a verdict on the token or
// the chat, the backoff of a restored channel's checks, and a file's type and name from its bytes.
#include "plugins/telegram/api_endpoint.hpp"
#include "plugins/telegram/file_kind.hpp"
#include <xconn/adapter/retry_backoff.hpp>
#include "plugins/telegram/telegram_json.hpp"
#include "plugins/telegram/telegram_text.hpp"
#include "plugins/telegram/telegram_updates.hpp"
#include "plugins/telegram/telegram_verdict.hpp"
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

// Only Telegram's own refusals are a verdict on the token or the chat; 5xx, 429, a foreign answer or none are not.
TEST(TelegramVerdict, OnlyTelegramsOwnRefusalsCondemnTheTokenOrTheChat) {
  auto reply = [](int status, bool ok = false, bool reached = true) {
    api_reply r;
    if (!reached) r.transport_error = "connect_failed";
    r.http_status = reached ? status : 0;
    r.ok = ok;
    if (ok) r.result = boost::json::object{{"id", 1}};
    return r;
  };
  EXPECT_EQ(token_verdict(reply(200, true)), verdict::accepted);
  EXPECT_EQ(token_verdict(reply(401)), verdict::token_refused);
  EXPECT_EQ(token_verdict(reply(404)), verdict::token_refused);
  EXPECT_EQ(token_verdict(reply(429)), verdict::rate_limited);
  for (int status : {500, 502, 503, 504, 400, 403, 200})
    EXPECT_EQ(token_verdict(reply(status)), verdict::unreachable) << status;  // 200 not ok: not the Bot API's answer
  EXPECT_EQ(token_verdict(reply(0, false, false)), verdict::unreachable);
  EXPECT_EQ(chat_verdict(reply(200, true)), verdict::accepted);
  EXPECT_EQ(chat_verdict(reply(400)), verdict::chat_refused);
  EXPECT_EQ(chat_verdict(reply(403)), verdict::chat_refused);
  EXPECT_EQ(chat_verdict(reply(401)), verdict::token_refused);
  EXPECT_EQ(chat_verdict(reply(429)), verdict::rate_limited);
  EXPECT_EQ(chat_verdict(reply(500)), verdict::unreachable);
  EXPECT_EQ(chat_verdict(reply(0, false, false)), verdict::unreachable);

  auto limited = reply(429);
  limited.retry_after_s = 7;
  auto e = sign_in_refusal(verdict::rate_limited, limited);
  EXPECT_EQ(e.code, "rate_limited");
  EXPECT_TRUE(e.retryable);
  EXPECT_NE(e.message.find("wait 7 s"), std::string::npos) << e.message;
  EXPECT_FALSE(sign_in_refusal(verdict::token_refused, reply(401)).retryable);
  EXPECT_EQ(sign_in_refusal(verdict::chat_refused, reply(400)).code, "chat_not_found");
  EXPECT_TRUE(sign_in_refusal(verdict::unreachable, reply(502)).retryable);
}

TEST(TelegramVerdict, AFailedSendNamesItsCodeRevokesOnALostChatAndIsRetryableOnlyBeforeAnyPartWent) {
  api_reply unreachable;
  unreachable.transport_error = "timeout";
  EXPECT_EQ(failure_code_of(unreachable), "target_unreachable");
  api_reply r;
  for (auto [status, code] : {std::pair{403, "telegram_forbidden"}, {401, "telegram_unauthorized"},
                              {429, "rate_limited"}, {400, "telegram_400"}, {502, "telegram_502"}}) {
    r.http_status = status;
    EXPECT_EQ(failure_code_of(r), code) << status;
    EXPECT_EQ(revokes_channel(r), status == 403 || status == 401) << status;
    EXPECT_EQ(send_retryable(r, false), status == 429 || status == 502) << status;
    EXPECT_FALSE(send_retryable(r, true)) << "a part already in the chat is never sent twice";
  }
  EXPECT_TRUE(send_retryable(unreachable, false));
}

TEST(TelegramJson, AChatIdGoesAsANumberAndAnythingElseAsGivenNeverThrowing) {
  EXPECT_EQ(chat_params("-1001234567890").at("chat_id"), -1001234567890LL);
  EXPECT_EQ(chat_params("42").at("chat_id"), 42);
  for (std::string given : {"@channel", "-", "--5", "1-2", "", "99999999999999999999999", " 42"})
    EXPECT_EQ(chat_params(given).at("chat_id"), boost::json::value(given)) << given;
}

TEST(TelegramUpdates, APageYieldsOnlyUpdatesPastTheOffsetInOrderWithTheirMessages) {
  auto page = boost::json::parse(R"([
    {"update_id": 7, "message": {"message_id": 1}},
    {"update_id": 9, "message": {"message_id": 2}},
    {"update_id": 9, "message": {"message_id": 2}},
    "not an update", {"update_id": "10"}, {"message": {}},
    {"update_id": 10, "edited_message": {"message_id": 3}},
    {"update_id": 11, "channel_post": {"message_id": 4}},
    {"update_id": 12, "message": "not an object"}])").as_array();
  auto updates = telegram::new_updates(page, telegram::update_offset::from_kept("8"));
  ASSERT_EQ(updates.size(), 4u);  // 7 was confirmed, 9 repeated, three are no update at all
  EXPECT_EQ(updates[0].id, 9);
  EXPECT_EQ(updates[0].next.next(), 10);
  ASSERT_NE(updates[0].message, nullptr);
  EXPECT_EQ(updates[0].message->at("message_id").as_int64(), 2);
  EXPECT_EQ(updates[1].id, 10);
  EXPECT_EQ(updates[1].message, nullptr);  // a kind not asked for still moves the offset
  EXPECT_EQ(updates[1].next.next(), 11);
  ASSERT_NE(updates[2].message, nullptr);
  EXPECT_EQ(updates[2].message->at("message_id").as_int64(), 4);
  EXPECT_EQ(updates[3].message, nullptr);
  EXPECT_EQ(updates[3].next.next(), 13);
}

TEST(TelegramUpdates, TheLastPossibleIdIsHandledOnceAndThenARepeat) {
  auto page = boost::json::parse(R"([{"update_id": 9223372036854775807, "message": {}},
                                     {"update_id": 9223372036854775807, "message": {}}])").as_array();
  auto updates = telegram::new_updates(page, {});
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_TRUE(telegram::new_updates(page, updates[0].next).empty());
}

TEST(TelegramBackoff, ChecksWaitOneSecondDoublingToSixty) {
  xconn::adapter::retry_backoff b;
  std::vector<long> waits;
  for (int i = 0; i < 9; ++i) waits.push_back(static_cast<long>(b.next().count()));
  EXPECT_EQ(waits, (std::vector<long>{1, 2, 4, 8, 16, 32, 60, 60, 60}));
}

TEST(TelegramFiles, ATypeComesFromTheFirstBytesAndTheNameTakesItsExtension) {
  EXPECT_EQ(sniff_mime("%PDF-1.7\n..."), "application/pdf");
  EXPECT_EQ(sniff_mime(std::string("PK\x03\x04", 4) + "zip"), "application/zip");
  EXPECT_EQ(sniff_mime("\x89PNG\r\n\x1A\n...."), "image/png");
  EXPECT_EQ(sniff_mime("OggS...."), "audio/ogg");
  EXPECT_EQ(sniff_mime("plain words"), "application/octet-stream");
  EXPECT_EQ(sniff_mime(""), "application/octet-stream");
  EXPECT_EQ(name_for("application/pdf"), "file.pdf");
  EXPECT_EQ(name_for("image/jpeg"), "file.jpg");
  EXPECT_EQ(name_for("application/octet-stream"), "file");
}

TEST(TelegramFiles, ImagesGoAsPhotosVideosAsVideosAndAnythingElseAsADocument) {
  EXPECT_EQ(upload_kind_of("image/png").method, "sendPhoto");
  EXPECT_EQ(upload_kind_of("image/png").field, "photo");
  EXPECT_EQ(upload_kind_of("video/mp4").method, "sendVideo");
  EXPECT_EQ(upload_kind_of("video/mp4").media_type, "video");
  EXPECT_EQ(upload_kind_of("application/pdf").method, "sendDocument");
  EXPECT_EQ(upload_kind_of("").media_type, "file");
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
