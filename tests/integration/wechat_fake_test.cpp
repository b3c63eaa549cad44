// The fake iLink API and CDN (tests/fakes/fake_ilink.py) itself, driven with plain HTTP: the wechat plugin's tests
// trust it to check headers the way iLink does, to script QR states and redirects, to hold long polls without
// blocking other calls, to keep messages until a cursor passes them, to verify AES uploads and serve AES downloads,
// and to answer the faults it is told to.
#include "support/fake_ilink.hpp"
#include "support/files_helpers.hpp"
#include "support/wire_client.hpp"

#include <openssl/evp.h>

#include <gtest/gtest.h>

#include <future>
#include <random>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using headers = std::map<std::string, std::string>;

std::string uin() { return base64(std::to_string(std::random_device{}())); }

headers bot_headers(const std::string& token) {
  return {{"iLink-App-Id", "bot"}, {"iLink-App-ClientVersion", "132102"}, {"Content-Type", "application/json"},
          {"AuthorizationType", "ilink_bot_token"}, {"Authorization", "Bearer " + token}, {"X-WECHAT-UIN", uin()}};
}

json::object with_base_info(json::object body) {
  body["base_info"] = {{"channel_version", "1.0.6"}, {"bot_agent", "xconn-test"}};
  return body;
}

http_reply bot_call(unsigned short port, const std::string& call, const std::string& token, json::object body) {
  return http_call(port, "POST", "/ilink/bot/" + call, bot_headers(token), json::serialize(with_base_info(body)));
}

http_reply new_qr(unsigned short port) {
  headers h{{"iLink-App-Id", "bot"}, {"iLink-App-ClientVersion", "132102"}, {"Content-Type", "application/json"},
            {"AuthorizationType", "ilink_bot_token"}, {"X-WECHAT-UIN", uin()}};
  return http_call(port, "POST", "/ilink/bot/get_bot_qrcode?bot_type=3", h, R"({"local_token_list":["old-1"]})");
}

http_reply qr_status(unsigned short port, const std::string& qrcode) {
  return http_call(port, "GET", "/ilink/bot/get_qrcode_status?qrcode=" + qrcode,
                   {{"iLink-App-Id", "bot"}, {"iLink-App-ClientVersion", "132102"}});
}

std::string str(const json::value& v, const char* key) { return json::value_to<std::string>(v.at(key)); }
std::int64_t ret(const http_reply& r) { return r.json().at("ret").to_number<std::int64_t>(); }

std::string aes_ecb(const std::string& key, const std::string& in, bool encrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::string out(in.size() + 16, '\0');
  int n = 0, tail = 0;
  auto* k = reinterpret_cast<const unsigned char*>(key.data());
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  bool ok = EVP_CipherInit_ex(ctx, EVP_aes_128_ecb(), nullptr, k, nullptr, encrypt ? 1 : 0) == 1 &&
            EVP_CipherUpdate(ctx, o, &n, reinterpret_cast<const unsigned char*>(in.data()),
                             static_cast<int>(in.size())) == 1 &&
            EVP_CipherFinal_ex(ctx, o + n, &tail) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return "<cipher failed>";
  out.resize(static_cast<std::size_t>(n + tail));
  return out;
}

std::string md5_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), digest, &n, EVP_md5(), nullptr);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) out += {digits[digest[i] >> 4], digits[digest[i] & 15]};
  return out;
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string unbase64(const std::string& in) {
  std::string out((in.size() / 4 + 1) * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(std::max(n, 0)) - (in.ends_with("==") ? 2 : in.ends_with("=") ? 1 : 0));
  return out;
}

// The CDN path and query of an upload_full_url on the fake.
std::string local_target(const std::string& url, const std::string& base) {
  return url.starts_with(base) ? url.substr(base.size()) : url;
}

TEST(WechatFake, QrScriptRedirectAndConfirm) {
  fake_ilink fake;
  fake.qr_script({"wait", "scaned_but_redirect", "confirmed"});
  fake.next_bot("tok-planted", "planted@im.bot", "owner@im.wechat");
  auto qr = new_qr(fake.port());
  ASSERT_EQ(qr.status, 200) << qr.body;
  auto code = str(qr.json(), "qrcode");
  EXPECT_EQ(str(qr.json(), "qrcode_img_content"), "https://liteapp.weixin.qq.com/q/" + code);

  EXPECT_EQ(str(qr_status(fake.port(), code).json(), "status"), "wait");
  auto redirect = qr_status(fake.port(), code).json();
  EXPECT_EQ(str(redirect, "status"), "scaned_but_redirect");
  EXPECT_EQ(str(redirect, "redirect_host"), "127.0.0.1:" + std::to_string(fake.redirect_port()));
  auto done = qr_status(fake.redirect_port(), code).json();
  EXPECT_EQ(str(done, "status"), "confirmed");
  EXPECT_EQ(str(done, "bot_token"), "tok-planted");
  EXPECT_EQ(str(done, "ilink_bot_id"), "planted@im.bot");
  EXPECT_EQ(str(done, "ilink_user_id"), "owner@im.wechat");
  EXPECT_EQ(str(done, "baseurl"), fake.base_url());
  EXPECT_EQ(str(qr_status(fake.port(), code).json(), "status"), "confirmed");  // the last step repeats

  // A second QR gets its own copy of the script, and a fresh bot.
  fake.qr_script({"expired"});
  auto second = str(new_qr(fake.port()).json(), "qrcode");
  EXPECT_NE(second, code);
  EXPECT_EQ(str(qr_status(fake.port(), second).json(), "status"), "expired");
  fake.qr_script({"confirmed"});
  auto third = qr_status(fake.port(), str(new_qr(fake.port()).json(), "qrcode")).json();
  EXPECT_TRUE(str(third, "bot_token").starts_with("tok-"));
  EXPECT_NE(str(third, "bot_token"), "tok-planted");

  auto s = fake.state();
  EXPECT_EQ(s.at("qr_created").to_number<int>(), 3);
  EXPECT_EQ(s.at("local_token_lists").as_array().at(0), json::array{"old-1"});
  auto polls = s.at("qr_polls").as_array();
  ASSERT_GE(polls.size(), 3u);
  EXPECT_EQ(polls[1].at("port").to_number<int>(), fake.port());
  EXPECT_EQ(polls[2].at("port").to_number<int>(), fake.redirect_port());
  EXPECT_TRUE(s.at("violations").as_array().empty()) << json::serialize(s.at("violations"));
}

TEST(WechatFake, QrFaultStepsAndHeaderChecks) {
  fake_ilink fake;
  fake.qr_script({"http500", "drop", "need_verifycode"});
  auto code = str(new_qr(fake.port()).json(), "qrcode");
  EXPECT_EQ(qr_status(fake.port(), code).status, 500);
  EXPECT_EQ(qr_status(fake.port(), code).status, 0);  // closed without an answer
  EXPECT_EQ(str(qr_status(fake.port(), code).json(), "status"), "need_verifycode");

  // The QR fetch wants bot_type=3 and no bearer token; the status poll wants the app headers.
  headers h{{"iLink-App-Id", "bot"}, {"iLink-App-ClientVersion", "132102"}, {"Content-Type", "application/json"},
            {"AuthorizationType", "ilink_bot_token"}, {"X-WECHAT-UIN", uin()}, {"Authorization", "Bearer x"}};
  EXPECT_EQ(http_call(fake.port(), "POST", "/ilink/bot/get_bot_qrcode?bot_type=3", h, R"({"local_token_list":[]})").status, 400);
  h.erase("Authorization");
  EXPECT_EQ(http_call(fake.port(), "POST", "/ilink/bot/get_bot_qrcode?bot_type=2", h, R"({"local_token_list":[]})").status, 400);
  EXPECT_EQ(http_call(fake.port(), "GET", "/ilink/bot/get_qrcode_status?qrcode=" + code, {{"iLink-App-Id", "bot"}}).status, 400);
  EXPECT_EQ(fake.state().at("violations").as_array().size(), 3u);
}

TEST(WechatFake, BotCallsCheckEveryHeaderAndBaseInfo) {
  fake_ilink fake;
  fake.next_bot("tok-a", "a@im.bot", "owner@im.wechat");
  fake.poll_hold_ms(100);
  EXPECT_EQ(ret(bot_call(fake.port(), "getupdates", "tok-a", {{"get_updates_buf", ""}})), 0);
  EXPECT_EQ(ret(bot_call(fake.port(), "getupdates", "tok-unknown", {{"get_updates_buf", ""}})), -14);

  std::vector<std::pair<std::string, std::string>> broken{
      {"iLink-App-Id", "other"}, {"iLink-App-ClientVersion", "2.4.6"}, {"Content-Type", "text/plain"},
      {"AuthorizationType", "bearer"}, {"Authorization", "tok-a"}, {"X-WECHAT-UIN", "12345"},
      {"X-WECHAT-UIN", base64("4294967296")}, {"X-WECHAT-UIN", base64("12a")}};
  for (const auto& [name, value] : broken) {
    auto h = bot_headers("tok-a");
    h[name] = value;
    auto r = http_call(fake.port(), "POST", "/ilink/bot/sendmessage", h,
                       json::serialize(with_base_info({{"msg", {{"to_user_id", "u"}, {"item_list", json::array{}}}}})));
    EXPECT_EQ(r.status, 400) << name << ": " << value;
  }
  auto h = bot_headers("tok-a");
  h.erase("X-WECHAT-UIN");
  EXPECT_EQ(http_call(fake.port(), "POST", "/ilink/bot/getconfig", h, json::serialize(with_base_info({}))).status, 400);
  EXPECT_EQ(http_call(fake.port(), "POST", "/ilink/bot/getconfig", bot_headers("tok-a"), "{}").status, 400);
  EXPECT_EQ(http_call(fake.port(), "POST", "/ilink/bot/getconfig", bot_headers("tok-a"),
                      R"({"base_info":{"channel_version":1,"bot_agent":"x"}})").status, 400);

  auto violations = fake.state().at("violations").as_array();
  EXPECT_EQ(violations.size(), broken.size() + 3);
  for (const auto& v : violations) EXPECT_EQ(json::serialize(v).find("tok-a"), std::string::npos);  // no token
  EXPECT_TRUE(fake.state().at("sent").as_array().empty());
}

TEST(WechatFake, LongPollHoldsWithoutBlockingAndKeepsUncommittedMessages) {
  fake_ilink fake;
  fake.next_bot("tok-p", "p@im.bot", "owner@im.wechat");
  fake.poll_hold_ms(400);
  auto started = std::chrono::steady_clock::now();
  auto empty = bot_call(fake.port(), "getupdates", "tok-p", {{"get_updates_buf", ""}}).json();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 350ms);
  EXPECT_TRUE(empty.at("msgs").as_array().empty());
  EXPECT_EQ(empty.at("longpolling_timeout_ms").to_number<int>(), 400);

  // A held poll answers as soon as a message comes, and other calls go on meanwhile.
  fake.poll_hold_ms(5000);
  auto held = std::async(std::launch::async, [&] {
    return bot_call(fake.port(), "getupdates", "tok-p", {{"get_updates_buf", ""}});
  });
  ASSERT_TRUE(wait_until([&] {
    auto polls = fake.state().at("polls").at("p@im.bot");
    return polls.at("active").to_number<int>() == 1;
  }, 3s));
  EXPECT_EQ(ret(bot_call(fake.port(), "getconfig", "tok-p", {{"ilink_user_id", "u"}})), 0);
  started = std::chrono::steady_clock::now();
  constexpr std::int64_t big_id = 7448678501208393000LL;
  fake.add_message("tok-p", wechat_text_message("alice@im.wechat", "hello", big_id, "ctx-1"));
  auto first = held.get().json();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  auto msgs = first.at("msgs").as_array();
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].at("message_id").as_int64(), big_id);
  EXPECT_EQ(msgs[0].at("seq").to_number<int>(), 1);
  EXPECT_EQ(str(msgs[0].at("item_list").at(0).at("text_item"), "text"), "hello");
  auto cursor = str(first, "get_updates_buf");

  // Not committed yet: the old cursor gets it again; the new one commits it, and batches are cut at batch_size.
  fake.poll_hold_ms(100);
  fake.batch_size(2);
  EXPECT_EQ(bot_call(fake.port(), "getupdates", "tok-p", {{"get_updates_buf", ""}}).json().at("msgs").as_array().size(), 1u);
  json::array more;
  for (int i = 0; i < 3; ++i) more.push_back(wechat_text_message("bob@im.wechat", "m" + std::to_string(i), 10 + i, "ctx-2"));
  fake.add_messages("tok-p", more);
  auto page = bot_call(fake.port(), "getupdates", "tok-p", {{"get_updates_buf", cursor}}).json();
  ASSERT_EQ(page.at("msgs").as_array().size(), 2u);
  EXPECT_EQ(str(page.at("msgs").at(0).at("item_list").at(0).at("text_item"), "text"), "m0");
  auto rest = bot_call(fake.port(), "getupdates", "tok-p", {{"get_updates_buf", str(page, "get_updates_buf")}}).json();
  ASSERT_EQ(rest.at("msgs").as_array().size(), 1u);
  EXPECT_EQ(str(rest.at("msgs").at(0).at("item_list").at(0).at("text_item"), "text"), "m2");
  // What a poll's cursor passed is committed: "" now starts at the one message no cursor passed yet.
  auto again = bot_call(fake.port(), "getupdates", "tok-p", {{"get_updates_buf", ""}}).json();
  ASSERT_EQ(again.at("msgs").as_array().size(), 1u);
  EXPECT_EQ(str(again.at("msgs").at(0).at("item_list").at(0).at("text_item"), "text"), "m2");

  auto polls = fake.state().at("polls").at("p@im.bot");
  EXPECT_EQ(polls.at("max_active").to_number<int>(), 1);
  EXPECT_EQ(polls.at("active").to_number<int>(), 0);
  EXPECT_EQ(polls.at("calls").to_number<int>(), 6);
  EXPECT_EQ(json::value_to<std::string>(polls.at("cursors").at(3)), cursor);
}

TEST(WechatFake, SendsTypingAndNotifyAreRecorded) {
  fake_ilink fake;
  fake.next_bot("tok-s", "s@im.bot", "owner@im.wechat");
  json::object msg{{"to_user_id", "alice@im.wechat"}, {"client_id", "msg_1"}, {"message_type", 2},
                   {"message_state", 2}, {"context_token", "ctx-1"},
                   {"item_list", json::array{json::object{{"type", 1}, {"text_item", {{"text", "hi"}}}}}}};
  EXPECT_EQ(ret(bot_call(fake.port(), "sendmessage", "tok-s", {{"msg", msg}})), 0);
  EXPECT_EQ(ret(bot_call(fake.port(), "sendmessage", "tok-s", {{"msg", msg}})), 0);
  auto config = bot_call(fake.port(), "getconfig", "tok-s", {{"ilink_user_id", "alice@im.wechat"}, {"context_token", "ctx-1"}}).json();
  auto ticket = str(config, "typing_ticket");
  EXPECT_FALSE(ticket.empty());
  EXPECT_EQ(ret(bot_call(fake.port(), "sendtyping", "tok-s", {{"ilink_user_id", "alice@im.wechat"}, {"typing_ticket", ticket}, {"status", 1}})), 0);
  EXPECT_EQ(ret(bot_call(fake.port(), "msg/notifystart", "tok-s", {})), 0);
  EXPECT_EQ(ret(bot_call(fake.port(), "msg/notifystop", "tok-s", {})), 0);

  auto s = fake.state();
  auto sent = s.at("sent").as_array();
  ASSERT_EQ(sent.size(), 2u);  // the same client_id twice is two sends
  EXPECT_EQ(str(sent[0], "bot"), "s@im.bot");
  EXPECT_EQ(str(sent[0], "to_user_id"), "alice@im.wechat");
  EXPECT_EQ(str(sent[0], "context_token"), "ctx-1");
  EXPECT_EQ(str(sent[1], "client_id"), "msg_1");
  EXPECT_EQ(str(sent[0].at("item_list").at(0).at("text_item"), "text"), "hi");
  EXPECT_EQ(str(s.at("configs").at(0), "context_token"), "ctx-1");
  auto typing = s.at("typing").at(0);
  EXPECT_EQ(typing.at("status").to_number<int>(), 1);
  EXPECT_TRUE(typing.at("ticket_known").as_bool());
  EXPECT_EQ(s.at("notify").at("start").to_number<int>(), 1);
  EXPECT_EQ(s.at("notify").at("stop").to_number<int>(), 1);
}

TEST(WechatFake, MediaDownloadsInEachKeyForm) {
  fake_ilink fake;
  auto bytes = byte_source(7).bytes(1000);
  for (std::string form : {"raw", "hex", "none"}) {
    auto ref = fake.add_media(bytes, form);
    auto param = str(ref.media, "encrypt_query_param");
    EXPECT_EQ(ref.media.at("encrypt_type").to_number<int>(), 1);
    auto got = http_call(fake.port(), "GET", "/c2c/download?encrypted_query_param=" + param);
    ASSERT_EQ(got.status, 200) << form;
    if (form == "none") {
      EXPECT_FALSE(ref.media.contains("aes_key"));
      EXPECT_EQ(got.body, bytes);
      continue;
    }
    auto key = unbase64(str(ref.media, "aes_key"));
    EXPECT_EQ(key.size(), form == "raw" ? 16u : 32u);
    if (form == "hex") {
      EXPECT_EQ(key, ref.aeskey_hex);
    }
    EXPECT_EQ(got.body.size(), (bytes.size() / 16 + 1) * 16);
    EXPECT_EQ(aes_ecb(unhex(ref.aeskey_hex), got.body, false), bytes) << form;
  }
  EXPECT_EQ(http_call(fake.port(), "GET", "/c2c/download?encrypted_query_param=dl-999").status, 404);
}

TEST(WechatFake, UploadsAreCheckedAgainstWhatGetUploadUrlAnnounced) {
  fake_ilink fake;
  fake.next_bot("tok-u", "u@im.bot", "owner@im.wechat");
  auto plain = byte_source(11).bytes(5000);
  auto key = byte_source(12).bytes(16);
  auto cipher = aes_ecb(key, plain, true);
  std::string key_hex;
  for (unsigned char c : key) key_hex += "0123456789abcdef"[c >> 4], key_hex += "0123456789abcdef"[c & 15];
  json::object ask{{"filekey", "fk-1"}, {"media_type", 3}, {"to_user_id", "alice@im.wechat"},
                   {"rawsize", plain.size()}, {"rawfilemd5", md5_hex(plain)}, {"filesize", cipher.size()},
                   {"no_need_thumb", true}, {"aeskey", key_hex}};
  auto url = str(bot_call(fake.port(), "getuploadurl", "tok-u", ask).json(), "upload_full_url");
  ASSERT_TRUE(url.starts_with(fake.cdn_base_url() + "/upload?")) << url;
  auto up = http_call(fake.port(), "POST", local_target(url, fake.base_url()),
                      {{"Content-Type", "application/octet-stream"}}, cipher);
  ASSERT_EQ(up.status, 200) << up.body;
  auto download = up.headers["x-encrypted-param"];
  ASSERT_FALSE(download.empty());
  auto back = http_call(fake.port(), "GET", "/c2c/download?encrypted_query_param=" + download);
  EXPECT_EQ(aes_ecb(key, back.body, false), plain);

  // The "param" mode: the client builds the CDN URL; a ciphertext under another key is refused and recorded.
  fake.upload_mode("param");
  auto param = str(bot_call(fake.port(), "getuploadurl", "tok-u", ask).json(), "upload_param");
  auto bad = http_call(fake.port(), "POST", "/c2c/upload?encrypted_query_param=" + param + "&filekey=fk-1",
                       {{"Content-Type", "application/octet-stream"}}, aes_ecb(std::string(16, 'k'), plain, true));
  EXPECT_EQ(bad.status, 400);
  auto param2 = str(bot_call(fake.port(), "getuploadurl", "tok-u", ask).json(), "upload_param");
  auto truncated = http_call(fake.port(), "POST", "/c2c/upload?encrypted_query_param=" + param2 + "&filekey=fk-1",
                             {{"Content-Type", "application/octet-stream"}}, cipher.substr(16));
  EXPECT_EQ(truncated.status, 400);
  ask["aeskey"] = "not-hex";
  EXPECT_EQ(bot_call(fake.port(), "getuploadurl", "tok-u", ask).status, 400);

  auto uploads = fake.state().at("uploads").as_array();
  ASSERT_EQ(uploads.size(), 3u);
  EXPECT_TRUE(uploads[0].at("ok").as_bool());
  EXPECT_EQ(str(uploads[0], "to_user_id"), "alice@im.wechat");
  EXPECT_FALSE(uploads[1].at("ok").as_bool());
  EXPECT_FALSE(str(uploads[1], "reason").empty());
  EXPECT_FALSE(uploads[2].at("ok").as_bool());
}

TEST(WechatFake, FaultsAndExpiredTokens) {
  fake_ilink fake;
  fake.next_bot("tok-f", "f@im.bot", "owner@im.wechat");
  fake.poll_hold_ms(100);
  // slow runs beside the rest: its answer comes after 6 s, the real one.
  fake.add_fault("getconfig", "slow");
  auto started = std::chrono::steady_clock::now();
  auto slow = std::async(std::launch::async, [&] { return bot_call(fake.port(), "getconfig", "tok-f", {{"ilink_user_id", "u"}}); });
  ASSERT_TRUE(wait_until([&] { return fake.state().at("configs").as_array().empty(); }, 1s));

  fake.add_fault("getupdates", "http500", 2);
  EXPECT_EQ(bot_call(fake.port(), "getupdates", "tok-f", {{"get_updates_buf", ""}}).status, 500);
  EXPECT_EQ(bot_call(fake.port(), "getupdates", "tok-f", {{"get_updates_buf", ""}}).status, 500);
  EXPECT_EQ(ret(bot_call(fake.port(), "getupdates", "tok-f", {{"get_updates_buf", ""}})), 0);
  fake.add_fault("sendmessage", "ret:-2");
  json::object msg{{"to_user_id", "alice@im.wechat"}, {"item_list", json::array{}}};
  auto refused = bot_call(fake.port(), "sendmessage", "tok-f", {{"msg", msg}}).json();
  EXPECT_EQ(refused.at("ret").to_number<int>(), -2);
  EXPECT_FALSE(str(refused, "errmsg").empty());
  fake.add_fault("*", "drop", 1);
  EXPECT_EQ(bot_call(fake.port(), "msg/notifystart", "tok-f", {}).status, 0);
  fake.add_fault("c2c/download", "http500", 5);
  EXPECT_EQ(http_call(fake.port(), "GET", "/c2c/download?encrypted_query_param=x").status, 500);
  fake.clear_faults();
  EXPECT_EQ(http_call(fake.port(), "GET", "/c2c/download?encrypted_query_param=x").status, 404);

  // An expired token answers -14 everywhere, a poll held at the time too.
  fake.poll_hold_ms(5000);
  auto held = std::async(std::launch::async, [&] { return bot_call(fake.port(), "getupdates", "tok-f", {{"get_updates_buf", ""}}); });
  ASSERT_TRUE(wait_until([&] { return fake.state().at("polls").at("f@im.bot").at("active").to_number<int>() == 1; }, 3s));
  fake.expire_token("tok-f");
  auto ended = held.get().json();
  EXPECT_EQ(ended.at("ret").to_number<int>(), -14);
  EXPECT_EQ(ended.at("errcode").to_number<int>(), -14);
  EXPECT_EQ(ret(bot_call(fake.port(), "sendmessage", "tok-f", {{"msg", msg}})), -14);

  auto late = slow.get();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 5900ms);
  EXPECT_EQ(late.status, 200);
  EXPECT_EQ(ret(late), 0);
}

}  // namespace
}  // namespace xconn::test
