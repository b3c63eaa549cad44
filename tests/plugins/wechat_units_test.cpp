// The wechat plugin's protocol helpers, tested directly (plugins/wechat/ilink_*.hpp, wechat_text.hpp): AES-128-ECB
// against answers computed with `openssl enc -aes-128-ecb`, the media keys in every form WeChat sends and the ones
// it must refuse, strict base64, message parts of at most 4,000 code points cut where a reader would, a
// WeixinMessage read for the host (64-bit ids, quotes, voice transcripts, media and their keys; nothing private in
// the emit), and the sendmessage bodies.
#include "plugins/wechat/ilink_crypto.hpp"
#include "plugins/wechat/ilink_messages.hpp"
#include "plugins/wechat/wechat_text.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

// Inside namespace wechat: in a unity batch another file's `using namespace telegram` must not make these
// names ambiguous.
namespace wechat::units_test {
namespace {

std::string unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::string times(std::string_view piece, std::size_t n) {
  std::string out;
  out.reserve(piece.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += piece;
  return out;
}

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < s.size(); ++n) {
    auto k = xconn::kit::utf8_sequence_bytes(s, at);
    at += k == 0 ? 1 : k;
  }
  return n;
}

boost::json::object parse(std::string_view text) { return boost::json::parse(text).as_object(); }

const std::string key = unhex("00112233445566778899aabbccddeeff");

// ---- AES ----

TEST(WechatCrypto, EncryptsAsOpenSslDoes) {
  // printf 'hello wechat' | openssl enc -aes-128-ecb -K 00112233445566778899aabbccddeeff | xxd -p
  EXPECT_EQ(to_hex(aes_ecb_encrypt(key, "hello wechat")), "72f71a102d316b6569f9ebbeada9910d");
  // A whole block gains a block of padding; nothing becomes one block of padding alone.
  EXPECT_EQ(to_hex(aes_ecb_encrypt(key, "0123456789abcdef")),
            "aebdd39b144089d5e31cacd35b7a113a00657ea140655a44782747705d422fad");
  EXPECT_EQ(to_hex(aes_ecb_encrypt(key, "")), "00657ea140655a44782747705d422fad");
}

TEST(WechatCrypto, DecryptsOpenSslsAnswerAndRoundTrips) {
  EXPECT_EQ(aes_ecb_decrypt(key, unhex("72f71a102d316b6569f9ebbeada9910d")), "hello wechat");
  EXPECT_EQ(aes_ecb_decrypt(key, unhex("00657ea140655a44782747705d422fad")), "");
  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 31u, 32u, 1000u}) {
    std::string plain = random_bytes(n);
    auto cipher = aes_ecb_encrypt(key, plain);
    EXPECT_EQ(cipher.size(), cipher_size(n));
    EXPECT_EQ(aes_ecb_decrypt(key, cipher), plain) << n;
  }
  EXPECT_EQ(cipher_size(0), 16u);
  EXPECT_EQ(cipher_size(15), 16u);
  EXPECT_EQ(cipher_size(16), 32u);
}

TEST(WechatCrypto, RefusesAWrongKeyAShortCipherAndBadPadding) {
  auto cipher = aes_ecb_encrypt(key, "a secret photo of some length");
  // A wrong key gives random padding; the odd pass (1 in ~256) must still not be what was sent.
  auto wrong = aes_ecb_decrypt(unhex("ffeeddccbbaa99887766554433221100"), cipher);
  EXPECT_TRUE(!wrong || *wrong != "a secret photo of some length");
  EXPECT_FALSE(aes_ecb_decrypt(key.substr(0, 15), cipher));
  EXPECT_FALSE(aes_ecb_decrypt(key + "x", cipher));
  EXPECT_FALSE(aes_ecb_decrypt("", cipher));
  EXPECT_FALSE(aes_ecb_decrypt(key, ""));
  EXPECT_FALSE(aes_ecb_decrypt(key, cipher.substr(0, 15)));
  EXPECT_FALSE(aes_ecb_decrypt(key, cipher.substr(0, cipher.size() - 1)));
  EXPECT_FALSE(aes_ecb_decrypt(key, cipher + "x"));
  // Padding bytes that disagree, a pad of 0, a pad past 16: each encrypted by hand with padding of our own.
  auto raw_block = [&](std::string block) {
    // ECB of one block = the first block of encrypting it with PKCS#7.
    return aes_ecb_encrypt(key, block).substr(0, 16);
  };
  EXPECT_FALSE(aes_ecb_decrypt(key, raw_block("0123456789abcd\x01\x02")));
  EXPECT_FALSE(aes_ecb_decrypt(key, raw_block(std::string("0123456789abcde\0", 16))));
  EXPECT_FALSE(aes_ecb_decrypt(key, raw_block("0123456789abcde\x11")));
  EXPECT_EQ(aes_ecb_decrypt(key, raw_block("0123456789abcd\x02\x02")), "0123456789abcd");
  EXPECT_THROW(aes_ecb_encrypt("short", "x"), std::invalid_argument);
}

// ---- keys, base64, hex, md5 ----

TEST(WechatCrypto, MediaKeyReadsBothBase64FormsAndBareHex) {
  EXPECT_EQ(media_key("ABEiM0RVZneImaq7zN3u/w=="), key);                              // base64 of the raw key
  EXPECT_EQ(media_key("MDAxMTIyMzM0NDU1NjY3Nzg4OTlhYWJiY2NkZGVlZmY="), key);          // base64 of its hex
  EXPECT_EQ(media_key("00112233445566778899AABBCCDDEEFF"), key);                      // bare hex
  EXPECT_EQ(hex_key("00112233445566778899aabbccddeeff"), key);
}

TEST(WechatCrypto, MediaKeyRefusesEverythingElse) {
  for (std::string_view bad : {"", "not base64!", "ABEiM0RVZneImaq7zN3u/w=", "ABEiM0RVZneImaq7zN3u", "ABEi M0RVZneImaq7zN3u/w==",
                               "ABEiM0RVZneImaq7zN3u/w==\n", "AAAA",                          // 3 bytes
                               "00112233445566778899aabbccddeeff0",                           // 33 hex chars
                               "00112233445566778899aabbccddeefg", "MDAxMTIyMzM0NDU1NjY3Nzg4OTlhYWJiY2NkZGVlZm=="})
    EXPECT_FALSE(media_key(bad)) << bad;
  EXPECT_FALSE(hex_key("00112233445566778899aabbccddeeff0"));
  EXPECT_FALSE(hex_key("00112233445566778899aabbccddeef"));
  EXPECT_FALSE(hex_key("0011223344556677 899aabbccddeeff"));
  EXPECT_FALSE(hex_key(""));
}

TEST(WechatCrypto, Base64IsStandardAndStrict) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("\xfb\xff"), "+/8=");
  for (std::size_t n = 0; n < 40; ++n) {
    auto bytes = random_bytes(n);
    EXPECT_EQ(unbase64(base64(bytes)), bytes);
  }
  EXPECT_EQ(unbase64(""), "");
  for (std::string_view bad : {"Zg", "Zg=", "Zg===", "=Zg=", "Zm=v", "Zh==", "Zm9=", "Zm9v\n", "Zm-_", "Z g=="})
    EXPECT_FALSE(unbase64(bad)) << bad;
}

TEST(WechatCrypto, HexMd5AndRandom) {
  EXPECT_EQ(to_hex(std::string_view("\x00\xff\x10", 3)), "00ff10");
  EXPECT_EQ(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(random_bytes(16).size(), 16u);
  EXPECT_NE(random_bytes(16), random_bytes(16));
  EXPECT_EQ(random_bytes(0), "");
}

TEST(WechatCrypto, UinIsBase64OfAFreshUint32InDecimal) {
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    auto uin = wechat_uin();
    seen.insert(uin);
    auto text = unbase64(uin);
    ASSERT_TRUE(text);
    ASSERT_FALSE(text->empty());
    ASSERT_LE(text->size(), 10u);
    for (char c : *text) ASSERT_TRUE(c >= '0' && c <= '9') << *text;
    EXPECT_LE(std::stoull(*text), 0xFFFFFFFFull);
  }
  EXPECT_GT(seen.size(), 15u);
}

// ---- split_text ----

void expect_parts_keep_the_text(std::string_view text, const std::vector<std::string>& parts, std::size_t max) {
  std::string joined, squeezed;
  for (const auto& p : parts) {
    EXPECT_FALSE(p.empty());
    EXPECT_LE(code_points(p), max);
    joined += p;
  }
  // Only whitespace may go (at the cuts): every other byte is kept, in order.
  for (char c : text)
    if (!detail::is_cut_space(c)) squeezed += c;
  std::string joined_squeezed;
  for (char c : joined)
    if (!detail::is_cut_space(c)) joined_squeezed += c;
  EXPECT_EQ(joined_squeezed, squeezed);
}

TEST(WechatText, ShortTextIsOnePartAndEmptyIsNone) {
  EXPECT_EQ(split_text("hello"), std::vector<std::string>{"hello"});
  EXPECT_TRUE(split_text("").empty());
  EXPECT_EQ(split_text(times("a", 4000)).size(), 1u);
  EXPECT_EQ(split_text(times("\xE4\xBD\xA0", 4000)).size(), 1u);  // 4,000 CJK code points are 12,000 bytes
}

TEST(WechatText, CutsAtAParagraphThenALineThenASpace) {
  auto para = times("a", 60) + "\n\n" + times("b", 30) + "\nccc ddd" + times(" eee", 5);
  EXPECT_EQ(split_text(para, 100), (std::vector<std::string>{times("a", 60), times("b", 30) + "\nccc ddd" + times(" eee", 5)}));
  auto line = times("a", 60) + "\n" + times("b", 30) + " " + times("c", 30);
  EXPECT_EQ(split_text(line, 100), (std::vector<std::string>{times("a", 60), times("b", 30) + " " + times("c", 30)}));
  auto words = times("a", 70) + " " + times("b", 50);
  EXPECT_EQ(split_text(words, 100), (std::vector<std::string>{times("a", 70), times("b", 50)}));
  // A break in the first half would leave a short part: cut at the limit instead.
  auto early = times("a", 10) + "\n\n" + times("b", 200);
  auto parts = split_text(early, 100);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(code_points(parts[0]), 100u);
}

TEST(WechatText, ACutNeverFallsInsideACodePoint) {
  const std::string emoji = "\xF0\x9F\x98\x80";
  auto parts = split_text(times(emoji, 9001));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], times(emoji, 4000));
  EXPECT_EQ(parts[2], times(emoji, 1001));
}

TEST(WechatText, AMegabyteIsSplitQuicklyAndKeptWhole) {
  std::string text;
  while (text.size() < (1u << 20)) text += "a sentence of words, \xE4\xBD\xA0\xE5\xA5\xBD. " + std::string(text.size() % 7 == 0 ? "\n\n" : "");
  auto start = std::chrono::steady_clock::now();
  auto parts = split_text(text);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_GT(parts.size(), 200u);
  expect_parts_keep_the_text(text, parts, max_part_code_points);
}

TEST(WechatText, InvalidUtf8BytesCountAsOneEachAndAreKept) {
  std::string text = times("\xFF", 150) + "ok" + times("\xC3", 150) + "\xE4\xBD";  // stray, lone leads, a cut tail
  auto parts = split_text(text, 100);
  std::string joined;
  for (const auto& p : parts) {
    EXPECT_LE(code_points(p), 100u);
    joined += p;
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(parts.size(), 4u);
}

TEST(WechatText, WhitespaceAtACutIsDroppedAndNoPartIsEmpty) {
  auto text = "   \n\n" + times(" ", 300) + times("x", 10) + times("\n", 300);
  auto parts = split_text(text, 50);
  expect_parts_keep_the_text(text, parts, 50);
  for (std::size_t max : {1u, 2u, 3u, 7u}) expect_parts_keep_the_text("a b\n\nc d e  f\n", split_text("a b\n\nc d e  f\n", max), max);
}

// ---- reading a message ----

TEST(WechatMessages, IdTextReadsSixtyFourBitIdsWithoutADouble) {
  auto v = boost::json::parse(R"({"a": 7448678501208393001, "b": 18446744073709551615, "c": "9223372036854775808",
                                  "d": -5, "e": 1.5e3, "f": "12a", "g": "", "h": true, "i": "123456789012345678901"})");
  const auto& o = v.as_object();
  EXPECT_EQ(id_text(o.if_contains("a")), "7448678501208393001");
  EXPECT_EQ(id_text(o.if_contains("b")), "18446744073709551615");
  EXPECT_EQ(id_text(o.if_contains("c")), "9223372036854775808");
  EXPECT_EQ(id_text(o.if_contains("d")), "-5");
  for (const char* k : {"e", "f", "g", "h", "i", "absent"}) EXPECT_EQ(id_text(o.if_contains(k)), "") << k;
  EXPECT_EQ(id_text(nullptr), "");
}

TEST(WechatMessages, ATextMessageBecomesAnEmitWithNothingPrivateInIt) {
  auto m = parse(R"({"seq": 3, "message_id": 9223372036854775809, "from_user_id": "o9cq80@im.wechat",
    "to_user_id": "bot@im.bot", "client_id": "c-1", "create_time_ms": 1765000000123, "message_type": 1,
    "display_name": "Ann\u0007ie", "context_token": "CTX-SECRET", "session_id": "s", "group_id": "",
    "item_list": [{"type": 1, "text_item": {"text": "hello"}}, {"type": 1, "text_item": {"text": "world"}},
                  {"type": 2, "image_item": {"media": {"encrypt_query_param": "PARAM-SECRET",
                                                       "aes_key": "ABEiM0RVZneImaq7zN3u/w=="}}}]})");
  auto in = inbound_of(m, "bot7");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->emit, parse(R"({"text": "hello\nworld", "msg_id": "bot7:9223372036854775809",
    "sender_id": "o9cq80@im.wechat", "sender_name": "Ann ie", "channel_key": "wechat/direct/o9cq80@im.wechat",
    "at": 1765000000123})"));
  EXPECT_EQ(in->from_user, "o9cq80@im.wechat");
  EXPECT_EQ(in->context_token, "CTX-SECRET");
  EXPECT_FALSE(in->quoted);
  ASSERT_EQ(in->media.size(), 1u);
  EXPECT_EQ(in->media[0].key, key);
  auto emitted = boost::json::serialize(in->emit);
  for (const char* secret : {"CTX-SECRET", "PARAM-SECRET", "ABEiM0", "bot@im.bot"})
    EXPECT_EQ(emitted.find(secret), std::string::npos) << secret;
}

TEST(WechatMessages, BotMessagesAndSenderlessOnesAreNotRead) {
  EXPECT_FALSE(inbound_of(parse(R"({"message_type": 2, "from_user_id": "bot", "message_id": 1,
    "item_list": [{"type": 1, "text_item": {"text": "my own reply"}}]})"), "b"));
  EXPECT_FALSE(inbound_of(parse(R"({"message_id": 1, "item_list": [{"type": 1, "text_item": {"text": "x"}}]})"), "b"));
  EXPECT_FALSE(inbound_of(parse(R"({"from_user_id": 5, "message_id": 1})"), "b"));
}

TEST(WechatMessages, GroupsIdsFallBackAndTimesOutOfRange) {
  auto in = inbound_of(parse(R"({"from_user_id": "u", "group_id": "g1", "message_id": 0, "client_id": "cli-9",
    "create_time_ms": 9007199254740993, "display_name": "", "item_list": [{"type": 1, "text_item": {"text": "hi"}}]})"), "b");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->emit.at("channel_key"), "wechat/group/g1");
  EXPECT_EQ(in->emit.at("msg_id"), "b:cli-9");
  EXPECT_EQ(in->emit.at("sender_name"), "u");
  EXPECT_FALSE(in->emit.contains("at"));
  auto negative = inbound_of(parse(R"({"from_user_id": "u", "message_id": "77", "create_time_ms": -1,
    "item_list": [{"type": 1, "text_item": {"text": "hi"}}]})"), "b");
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->emit.at("msg_id"), "b:77");
  EXPECT_FALSE(negative->emit.contains("at"));
}

TEST(WechatMessages, AVoiceTranscriptIsTextAndItsAudioAFile) {
  auto in = inbound_of(parse(R"({"from_user_id": "u", "message_id": 1, "item_list": [{"type": 3, "voice_item": {
    "text": "what the voice said", "media": {"encrypt_query_param": "vp", "aes_key": "ABEiM0RVZneImaq7zN3u/w=="}}}]})"), "b");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->emit.at("text"), "what the voice said");
  ASSERT_EQ(in->media.size(), 1u);
  EXPECT_EQ(in->media[0].kind, "voice");
  EXPECT_EQ(in->media[0].filename, "voice.silk");
  EXPECT_EQ(in->media[0].mime_type, "audio/silk");
  EXPECT_EQ(in->media[0].query_param, "vp");
}

TEST(WechatMessages, AQuoteBecomesContextAndLendsItsMediaWhenTheMessageHasNone) {
  auto in = inbound_of(parse(R"({"from_user_id": "u", "message_id": 42, "item_list": [{"type": 1,
    "text_item": {"text": "what about this?"}, "ref_msg": {"title": "Bob", "message_item": {"type": 1,
    "text_item": {"text": "the quoted words"}}}}]})"), "b");
  ASSERT_TRUE(in && in->quoted);
  EXPECT_EQ(*in->quoted, parse(R"({"text": "Bob\nthe quoted words", "msg_id": "b:42:quoted", "sender_id": "u",
    "channel_key": "wechat/direct/u", "trigger": false})"));
  EXPECT_EQ(in->emit.at("text"), "what about this?");

  auto only_title = inbound_of(parse(R"({"from_user_id": "u", "message_id": 43, "item_list": [{"type": 1,
    "text_item": {"text": "and this"}, "ref_msg": {"title": "an earlier photo"}}]})"), "b");
  ASSERT_TRUE(only_title && only_title->quoted);
  EXPECT_EQ(only_title->quoted->at("text"), "an earlier photo");

  auto quoted_image = inbound_of(parse(R"({"from_user_id": "u", "message_id": 44, "item_list": [{"type": 1,
    "text_item": {"text": "look"}, "ref_msg": {"message_item": {"type": 2, "image_item": {
    "aeskey": "00112233445566778899aabbccddeeff", "media": {"full_url": "https://cdn/x"}}}}}]})"), "b");
  ASSERT_TRUE(quoted_image);
  EXPECT_FALSE(quoted_image->quoted);  // no title, no text
  ASSERT_EQ(quoted_image->media.size(), 1u);
  EXPECT_EQ(quoted_image->media[0].full_url, "https://cdn/x");
  EXPECT_EQ(quoted_image->media[0].key, key);

  for (const char* ref : {R"({})", R"({"message_item": 5})", R"("text")", R"({"title": 7})"}) {
    auto m = parse(R"({"from_user_id": "u", "message_id": 45, "item_list": [{"type": 1, "text_item": {"text": "x"}}]})");
    m["item_list"].as_array()[0].as_object()["ref_msg"] = boost::json::parse(ref);
    auto r = inbound_of(m, "b");
    ASSERT_TRUE(r) << ref;
    EXPECT_FALSE(r->quoted) << ref;
  }
}

TEST(WechatMessages, MediaOfEachKindWithItsKeyNameAndType) {
  auto media = media_of(parse(R"({"item_list": [
    {"type": 2, "image_item": {"aeskey": "00112233445566778899aabbccddeeff",
      "media": {"encrypt_query_param": "ip", "aes_key": "MDAxMTIyMzM0NDU1NjY3Nzg4OTlhYWJiY2NkZGVlZmY="}}},
    {"type": 2, "image_item": {"media": {}, "thumb_media": {"encrypt_query_param": "tp", "aes_key": "ABEiM0RVZneImaq7zN3u/w=="}}},
    {"type": 4, "file_item": {"file_name": "../../etc/Report.PDF", "len": "10", "media": {"encrypt_query_param": "fp",
      "aes_key": "ABEiM0RVZneImaq7zN3u/w=="}}},
    {"type": 4, "file_item": {"file_name": "blob.weird", "media": {"encrypt_query_param": "fp2"}}},
    {"type": 5, "video_item": {"media": {"full_url": "https://v", "aes_key": "ABEiM0RVZneImaq7zN3u/w=="}}},
    {"type": 9, "whatever": {}}, {"type": 1, "text_item": {"text": "t"}}, 7, "x", {"type": "2"}]})"));
  ASSERT_EQ(media.size(), 5u);
  EXPECT_EQ(media[0].kind, "image");
  EXPECT_EQ(media[0].query_param, "ip");
  EXPECT_EQ(media[0].key, key);
  EXPECT_EQ(media[0].filename, "wechat-image.jpg");
  EXPECT_EQ(media[0].mime_type, "image/jpeg");
  EXPECT_EQ(media[1].query_param, "tp");  // the thumbnail when the full image names no location
  EXPECT_EQ(media[1].key, key);
  EXPECT_EQ(media[2].kind, "file");
  EXPECT_EQ(media[2].filename, "Report.PDF");
  EXPECT_EQ(media[2].mime_type, "application/pdf");
  EXPECT_EQ(media[3].filename, "blob.weird");
  EXPECT_EQ(media[3].mime_type, "application/octet-stream");
  EXPECT_EQ(media[3].key, "");  // no key: the body is plain
  EXPECT_FALSE(media[3].bad_key);
  EXPECT_EQ(media[4].kind, "video");
  EXPECT_EQ(media[4].full_url, "https://v");
  EXPECT_EQ(media[4].filename, "wechat-video.mp4");
  EXPECT_EQ(media[4].mime_type, "video/mp4");
  for (const auto& m : media) EXPECT_FALSE(m.bad_key);
}

TEST(WechatMessages, AKeyThatDoesNotDecodeIsFlaggedNotDropped) {
  auto media = media_of(parse(R"({"item_list": [
    {"type": 4, "file_item": {"file_name": "a.txt", "media": {"encrypt_query_param": "p", "aes_key": "not base64!"}}},
    {"type": 2, "image_item": {"aeskey": "00112233445566778899aabbccddeeff0", "media": {"encrypt_query_param": "p"}}},
    {"type": 2, "image_item": {"aeskey": "zz", "media": {"encrypt_query_param": "p", "aes_key": "ABEiM0RVZneImaq7zN3u/w=="}}}]})"));
  ASSERT_EQ(media.size(), 3u);
  EXPECT_TRUE(media[0].bad_key);
  EXPECT_EQ(media[0].key, "");
  EXPECT_TRUE(media[1].bad_key);
  EXPECT_FALSE(media[2].bad_key);  // the image's own hex is bad, its media's key is good
  EXPECT_EQ(media[2].key, key);
}

TEST(WechatMessages, AThousandItemsAreReadBoundedly) {
  boost::json::array items;
  for (int i = 0; i < 1000; ++i) {
    items.push_back(boost::json::object{{"type", 1}, {"text_item", boost::json::object{{"text", times("w", 100)}}}});
    items.push_back(boost::json::object{{"type", 4}, {"file_item", boost::json::object{{"file_name", "f.txt"}}}});
  }
  boost::json::object m{{"from_user_id", "u"}, {"message_id", 1}, {"item_list", std::move(items)}};
  auto in = inbound_of(m, "b");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->media.size(), max_media_per_message);
  EXPECT_LE(in->emit.at("text").as_string().size(), max_emit_text_bytes);
  EXPECT_GT(in->emit.at("text").as_string().size(), 60'000u);
}

TEST(WechatMessages, AMessageWithNothingForwardedIsContextNotLost) {
  auto in = inbound_of(parse(R"({"from_user_id": "u", "message_id": 1, "item_list": [{"type": 11,
    "tool_call_start_item": {"tool_name": "x"}}, {"type": 99}]})"), "b");
  ASSERT_TRUE(in);
  EXPECT_FALSE(in->emit.at("text").as_string().empty());
  EXPECT_EQ(in->emit.at("trigger"), false);
  EXPECT_TRUE(in->media.empty());
}

TEST(WechatMessages, InvalidUtf8AndLongDisplayNamesAreBoundedForTheHost) {
  auto m = parse(R"({"from_user_id": "u", "message_id": 1, "item_list": [{"type": 1, "text_item": {"text": "x"}}]})");
  m["display_name"] = times("\xE4\xBD\xA0", 200) + "\xFF";
  m["item_list"].as_array()[0].as_object()["text_item"].as_object()["text"] = "ok \xFF\xC3 end";
  auto in = inbound_of(m, "b");
  ASSERT_TRUE(in);
  EXPECT_LE(in->emit.at("sender_name").as_string().size(), xconn::kit::emit_field_max_bytes);
  EXPECT_EQ(in->emit.at("text"), "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
}

// ---- sending ----

TEST(WechatMessages, TextMessageIsTheMsgOfASendmessage) {
  EXPECT_EQ(text_message("u@im.wechat", "ctx", "msg_1", "hi"), parse(R"({"to_user_id": "u@im.wechat",
    "client_id": "msg_1", "message_type": 2, "message_state": 2, "context_token": "ctx",
    "item_list": [{"type": 1, "text_item": {"text": "hi"}}]})"));
  EXPECT_FALSE(text_message("u", "", "c", "hi").contains("context_token"));
}

TEST(WechatMessages, MediaMessageOfEachKind) {
  const auto media = R"({"encrypt_query_param": "dp", "aes_key": "a2V5", "encrypt_type": 1})";
  auto image = media_message("u", "ctx", "c1", "image", "dp", "a2V5", 32, 20, "p.png", "m5");
  EXPECT_EQ(image.at("item_list"), boost::json::parse(std::string(R"([{"type": 2, "image_item": {"media": )") + media +
                                                      R"(, "mid_size": 32}}])"));
  auto video = media_message("u", "ctx", "c2", "video", "dp", "a2V5", 48, 40, "v.mp4", "m5");
  EXPECT_EQ(video.at("item_list"), boost::json::parse(std::string(R"([{"type": 5, "video_item": {"media": )") + media +
                                                      R"(, "video_size": 48}}])"));
  auto file = media_message("u", "ctx", "c3", "file", "dp", "a2V5", 16, 3, "a.txt", "m5");
  EXPECT_EQ(file.at("item_list"), boost::json::parse(std::string(R"([{"type": 4, "file_item": {"media": )") + media +
                                                     R"(, "file_name": "a.txt", "md5": "m5", "len": "3"}}])"));
  EXPECT_EQ(file.at("message_type"), 2);
  EXPECT_EQ(file.at("message_state"), 2);
  EXPECT_EQ(file.at("to_user_id"), "u");
  EXPECT_EQ(file.at("context_token"), "ctx");
}

TEST(WechatMessages, UploadMediaTypeByMimeThenExtension) {
  EXPECT_EQ(upload_media_type("image/png", "x.bin"), 1);
  EXPECT_EQ(upload_media_type("video/quicktime", "x"), 2);
  EXPECT_EQ(upload_media_type("application/octet-stream", "PHOTO.JPEG"), 1);
  EXPECT_EQ(upload_media_type("", "clip.MKV"), 2);
  EXPECT_EQ(upload_media_type("audio/mpeg", "song.mp3"), 3);
  EXPECT_EQ(upload_media_type("", "noext"), 3);
  EXPECT_EQ(upload_media_type("text/plain", "notes.txt"), 3);
}

}  // namespace
}  // namespace wechat::units_test
