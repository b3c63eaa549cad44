// The wechat plugin (docs/wechat.md) on the real server, against the fake iLink API and CDN on loopback
// (tests/fakes/fake_ilink.py), which checks every request's headers and base_info the way iLink does: the QR
// sign-in (scanned, redirected, refreshed, capped), inbound messages once and in order with quotes as context and
// media decrypted into the file store, finals and tools to the right user with that user's context_token, -14 and
// -2, one bot one channel, a restart that restores the channel with its sealed token, and the token nowhere else.
#include "support/data_plane.hpp"
#include "support/fake_ilink.hpp"
#include "support/files_helpers.hpp"
#include "support/log_capture.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include "support/daemon_process.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <set>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string token = "ilink-planted-bot-token-5c1e9a7d";
const std::string bot = "b0tacc0unt01@im.bot";
const std::string owner = "owner-7@im.wechat";

// A channel signed in through the QR flow as the fake's scripted steps go; its id ("" and a test failure otherwise).
std::string qr_signed_in(dp_client& dp, fake_ilink& api, const std::string& bot_token = token,
                         const std::string& bot_id = bot) {
  api.next_bot(bot_token, bot_id, owner);
  auto channel = dp.open();
  auto start = dp.auth_start(channel, "wechat_qr_login", std::nullopt);
  if (!start || text_of(payload_of(*start), "status") != "pending") {
    ADD_FAILURE() << (start ? json::serialize(*start) : "no answer");
    return "";
  }
  json::object poll{{"flow_id", "wechat_qr_login"}, {"auth_session_id", text_of(payload_of(*start), "auth_session_id")}};
  std::optional<json::object> s;
  for (int i = 0; i < 6; ++i) {
    s = dp.request("auth.status", poll, channel, 15s);
    if (s && text_of(payload_of(*s), "status") == "authenticated") return channel;
  }
  ADD_FAILURE() << "the QR sign-in did not complete: " << (s ? json::serialize(*s) : "no answer");
  return "";
}

// chat.message pushes on channel, acked, until count or a gap without one; their texts by msg order, each message
// counted once (a redelivery of one seen before is acked and skipped).
std::vector<std::string> read_texts(dp_client& dp, const std::string& channel, std::size_t count,
                                    std::set<std::string>& seen, std::chrono::milliseconds gap = 10s) {
  std::vector<std::string> texts;
  while (texts.size() < count) {
    auto m = dp.next_push("chat.message", channel, gap);
    if (!m) break;
    auto p = payload_of(*m);
    dp.send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    if (seen.insert(text_of(p, "message_id")).second) texts.push_back(text_of(p, "text"));
  }
  return texts;
}

class wechat : public ::testing::Test {
 protected:
  wechat()
      : server({"wechat.so"}, [this](config& c) {
          c.connectors["wechat"].config = {{"api_base_url", api.base_url()}, {"cdn_base_url", api.cdn_base_url()}};
        }) {
    api.poll_hold_ms(500);
  }
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "wechat");
    ASSERT_TRUE(dp);
  }
  void TearDown() override {
    dp.reset();
    server.stop();
    // Every request the plugin made carried iLink's headers and base_info.
    EXPECT_TRUE(api.state()["violations"].as_array().empty()) << json::serialize(api.state()["violations"]);
  }

  std::optional<json::object> status(const std::string& channel, const std::string& session, bool refresh = false) {
    json::object payload{{"flow_id", "wechat_qr_login"}, {"auth_session_id", session}};
    if (refresh) payload["refresh"] = true;
    return dp->request("auth.status", std::move(payload), channel, 15s);
  }
  std::string signed_in(const std::string& bot_token = token, const std::string& bot_id = bot) {
    return qr_signed_in(*dp, api, bot_token, bot_id);
  }
  // chat.message pushes on channel, acked, until count or a gap without one.
  std::vector<json::object> messages(const std::string& channel, std::size_t count,
                                     std::chrono::milliseconds gap = 5s) {
    std::vector<json::object> out;
    while (out.size() < count) {
      auto m = dp->next_push("chat.message", channel, gap);
      if (!m) break;
      out.push_back(payload_of(*m));
      dp->send("chat.message.ack", {{"message_id", out.back().at("message_id")}, {"status", "accepted"}}, channel);
    }
    return out;
  }
  std::vector<json::object> sent() {
    std::vector<json::object> out;
    auto state = api.state();
    for (const auto& s : state["sent"].as_array()) out.push_back(s.as_object());
    return out;
  }
  // A file uploaded to the channel as xAgent does; its file_ref ("" and a test failure otherwise).
  std::string upload(const std::string& channel, const std::string& bytes, const std::string& name,
                     const std::string& type) {
    auto r = http_call(server.port(), "POST", "/connectors/wechat/files/uploads",
                       {{"Authorization", "Bearer " + server.key()}, {"X-XAgent-Connector-Channel-ID", channel},
                        {"Content-Type", multipart_type()}},
                       multipart({file_part(bytes, name, type)}));
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? json::value_to<std::string>(r.json().at("file_ref")) : "";
  }
  std::string status_of(const std::string& channel) {
    auto d = dp->get_descriptor(channel);
    return d ? text_of(descriptor_in(*d)["connection"].as_object(), "status") : "";
  }

  fake_ilink api;
  server_fixture server;
  std::unique_ptr<dp_client> dp;
};

std::string text_item_of(const json::object& sent) {
  const auto& item = sent.at("item_list").as_array().at(0).as_object();
  return text_of(item.at("text_item").as_object(), "text");
}

TEST_F(wechat, the_qr_sign_in_goes_pending_scanned_authenticated_and_the_token_stays_sealed) {
  api.next_bot(token, bot, owner);
  auto channel = dp->open();
  auto start = dp->auth_start(channel, "wechat_qr_login", std::nullopt);
  ASSERT_TRUE(start);
  auto p = payload_of(*start);
  ASSERT_EQ(text_of(p, "status"), "pending") << json::serialize(*start);
  EXPECT_TRUE(text_of(p, "qr_code_text").starts_with("https://liteapp.weixin.qq.com/q/qr-")) << json::serialize(p);
  EXPECT_GT(p.at("expires_at").to_number<std::int64_t>(), 0);
  auto session = text_of(p, "auth_session_id");
  auto scanned = status(channel, session);
  ASSERT_TRUE(scanned);
  EXPECT_EQ(text_of(payload_of(*scanned), "status"), "pending");  // the script's first step: wait
  scanned = status(channel, session);
  EXPECT_EQ(text_of(payload_of(*scanned), "status"), "scanned");
  auto done = status(channel, session);
  ASSERT_TRUE(done);
  ASSERT_EQ(text_of(payload_of(*done), "status"), "authenticated") << json::serialize(*done);
  auto target = descriptor_in(*done)["target"].as_object();
  EXPECT_EQ(text_of(target, "account_hint"), "b0ta***.bot");
  EXPECT_EQ(text_of(descriptor_in(*done)["connection"].as_object(), "status"), "connected");
  for (const auto& text : dp->received()) EXPECT_EQ(text.find(token), std::string::npos) << text;
  EXPECT_TRUE(api.state()["violations"].as_array().empty()) << json::serialize(api.state()["violations"]);
}

TEST_F(wechat, a_redirect_moves_the_polls_and_an_expired_code_is_replaced_three_times_then_expires) {
  api.qr_script({"scaned_but_redirect", "confirmed"});
  api.next_bot(token, bot, owner);
  auto channel = dp->open();
  auto start = dp->auth_start(channel, "wechat_qr_login", std::nullopt);
  ASSERT_TRUE(start);
  auto session = text_of(payload_of(*start), "auth_session_id");
  EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "scanned");
  EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "authenticated");
  auto polls = api.state()["qr_polls"].as_array();
  ASSERT_EQ(polls.size(), 2u);
  EXPECT_EQ(polls[1].at("port").to_number<int>(), api.redirect_port());

  api.qr_script({"expired"});
  auto other = dp->open();
  start = dp->auth_start(other, "wechat_qr_login", std::nullopt);
  ASSERT_TRUE(start);
  session = text_of(payload_of(*start), "auth_session_id");
  std::set<std::string> codes{text_of(payload_of(*start), "qr_code_text")};
  for (int i = 0; i < 3; ++i) {
    auto s = status(other, session);
    ASSERT_TRUE(s);
    EXPECT_EQ(text_of(payload_of(*s), "status"), "pending");
    codes.insert(text_of(payload_of(*s), "qr_code_text"));
  }
  EXPECT_EQ(codes.size(), 4u);  // a new code each time
  auto last = status(other, session);
  ASSERT_TRUE(last);
  EXPECT_EQ(text_of(payload_of(*last), "status"), "expired");
}

TEST_F(wechat, a_status_poll_wechat_does_not_answer_leaves_the_run_as_it_was) {
  api.qr_script({"scaned", "http500", "drop", "drop", "confirmed"});  // a drop twice: the kept connection, a new one
  api.next_bot(token, bot, owner);
  auto channel = dp->open();
  auto start = dp->auth_start(channel, "wechat_qr_login", std::nullopt);
  ASSERT_TRUE(start);
  auto session = text_of(payload_of(*start), "auth_session_id");
  EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "scanned");
  EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "scanned");
  EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "scanned");
  EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "authenticated");
}

TEST_F(wechat, a_qr_start_wechat_does_not_answer_fails_retryable) {
  api.add_fault("get_bot_qrcode", "http500");
  auto start = dp->auth_start(dp->open(), "wechat_qr_login", std::nullopt);
  ASSERT_TRUE(start);
  EXPECT_EQ(text_of(payload_of(*start), "status"), "failed");
  EXPECT_EQ(error_code(*start), "target_unreachable");
}

TEST_F(wechat, text_messages_arrive_once_and_in_order_with_quotes_as_context) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  json::array batch;
  for (int i = 1; i <= 30; ++i)
    batch.push_back(wechat_text_message("ann@im.wechat", "m" + std::to_string(i), 7448678501208393000LL + i, "ctx-a"));
  api.add_messages(token, batch);
  auto got = messages(channel, 30);
  ASSERT_EQ(got.size(), 30u);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(text_of(got[i], "text"), "m" + std::to_string(i + 1));
  EXPECT_EQ(text_of(got[0].at("sender").as_object(), "id"), "ann@im.wechat");
  EXPECT_FALSE(dp->next_push("chat.message", channel, 1s));  // none twice

  auto quoting = wechat_text_message("ann@im.wechat", "and this?", 42, "ctx-a");
  quoting["item_list"].as_array()[0].as_object()["ref_msg"] =
      json::object{{"title", "Bo:"}, {"message_item", {{"type", 1}, {"text_item", {{"text", "the deploy broke"}}}}}};
  api.add_message(token, quoting);
  auto q = messages(channel, 1);
  ASSERT_EQ(q.size(), 1u);
  auto context = q[0].at("context").as_array();
  ASSERT_EQ(context.size(), 1u) << json::serialize(q[0]);
  EXPECT_NE(text_of(context[0].as_object(), "text").find("the deploy broke"), std::string::npos);
}

TEST_F(wechat, a_final_goes_to_the_sender_with_their_context_token_and_a_long_one_is_split) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  api.add_message(token, wechat_text_message("bo@im.wechat", "hello", 1, "ctx-bo-1"));
  api.add_message(token, wechat_text_message("ann@im.wechat", "hi", 2, "ctx-ann-1"));
  ASSERT_EQ(messages(channel, 2).size(), 2u);
  // The final answers the latest message: Ann's, with her context_token.
  auto ack = dp->request("chat.message", {{"message_id", "reply-1"}, {"text", "hi Ann"}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  auto out = sent();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(text_of(out[0], "to_user_id"), "ann@im.wechat");
  EXPECT_EQ(text_of(out[0], "context_token"), "ctx-ann-1");
  EXPECT_EQ(text_item_of(out[0]), "hi Ann");

  api.add_message(token, wechat_text_message("bo@im.wechat", "and me?", 3, "ctx-bo-2"));
  ASSERT_EQ(messages(channel, 1).size(), 1u);
  std::string long_text;
  for (int i = 0; i < 900; ++i) long_text += "word ";  // 4,500 code points: two parts
  ack = dp->request("chat.message", {{"message_id", "reply-2"}, {"text", long_text}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  out = sent();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(text_of(out[1], "to_user_id"), "bo@im.wechat");
  EXPECT_EQ(text_of(out[1], "context_token"), "ctx-bo-2");  // his latest
  // Cut between words, the space at the cut dropped: nothing else lost.
  auto no_spaces = [](std::string t) { return std::erase(t, ' '), t; };
  EXPECT_LE(text_item_of(out[1]).size(), 4000u);
  EXPECT_TRUE(text_item_of(out[1]).ends_with("word"));
  EXPECT_EQ(no_spaces(text_item_of(out[1]) + text_item_of(out[2])), no_spaces(long_text));
  EXPECT_TRUE(api.state()["violations"].as_array().empty());
}

TEST_F(wechat, media_arrive_decrypted_as_files_whose_download_urls_serve_the_same_bytes) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  const std::string image = random_bytes(70001), doc = "quarterly numbers\n", voice = random_bytes(3000),
                    video = random_bytes(40000);
  auto raw = api.add_media(image, "raw"), hex = api.add_media(doc, "hex"), audio = api.add_media(voice, "raw"),
       clip = api.add_media(video, "none");
  auto m = wechat_text_message("ann@im.wechat", "", 5, "ctx");
  m["item_list"] = json::array{
      json::object{{"type", 2}, {"image_item", {{"media", raw.media}}}},
      json::object{{"type", 4}, {"file_item", {{"media", hex.media}, {"file_name", "numbers.txt"}, {"len", "18"}}}},
      json::object{{"type", 3}, {"voice_item", {{"media", audio.media}, {"text", "call me back"}}}},
      json::object{{"type", 5}, {"video_item", {{"media", clip.media}}}}};
  api.add_message(token, m);
  auto got = messages(channel, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(text_of(got[0], "text").find("call me back"), std::string::npos) << json::serialize(got[0]);
  const auto& files = got[0].at("files").as_array();
  ASSERT_EQ(files.size(), 4u) << json::serialize(got[0]);
  std::vector<std::string> expected{image, doc, voice, video};
  for (std::size_t i = 0; i < 4; ++i) {
    auto url = parse_url(text_of(files[i].as_object(), "download_url"));
    ASSERT_TRUE(url.ok);
    EXPECT_TRUE(http_call(server.port(), "GET", url.target()).body == expected[i]) << "file " << i << " differs";
  }
  EXPECT_EQ(text_of(files[1].as_object(), "filename"), "numbers.txt");
  EXPECT_EQ(text_of(files[3].as_object(), "type"), "video");
}

TEST_F(wechat, a_finals_file_is_uploaded_encrypted_and_sent_as_an_image_after_its_text) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  api.add_message(token, wechat_text_message("ann@im.wechat", "the chart please", 1, "ctx-ann"));
  ASSERT_EQ(messages(channel, 1).size(), 1u);
  const std::string png = "\x89PNG\r\n\x1a\n" + random_bytes(20000);
  auto ref = upload(channel, png, "chart.png", "image/png");
  ASSERT_FALSE(ref.empty());
  auto ack = dp->request("chat.message",
                         {{"message_id", "with-file"}, {"text", "here it is"},
                          {"files", json::array{json::object{{"type", "image"}, {"file_ref", ref}}}}},
                         channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  auto out = sent();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(text_item_of(out[0]), "here it is");
  auto item = out[1].at("item_list").as_array().at(0).as_object();
  EXPECT_EQ(item.at("type").to_number<int>(), 2);
  EXPECT_EQ(text_of(out[1], "to_user_id"), "ann@im.wechat");
  EXPECT_EQ(text_of(out[1], "context_token"), "ctx-ann");
  auto uploads = api.state()["uploads"].as_array();
  ASSERT_EQ(uploads.size(), 1u);
  EXPECT_TRUE(uploads[0].at("ok").as_bool()) << json::serialize(uploads[0]);
  EXPECT_EQ(uploads[0].at("rawsize").to_number<std::size_t>(), png.size());
}

TEST_F(wechat, a_refresh_gives_a_new_code_and_restarts_the_count) {
  api.qr_script({"expired"});
  auto channel = dp->open();
  auto start = dp->auth_start(channel, "wechat_qr_login", std::nullopt);
  ASSERT_TRUE(start);
  auto session = text_of(payload_of(*start), "auth_session_id");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(text_of(payload_of(*status(channel, session)), "status"), "pending");
  auto fresh = status(channel, session, true);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(text_of(payload_of(*fresh), "status"), "pending");
  EXPECT_NE(text_of(payload_of(*fresh), "qr_code_text"), text_of(payload_of(*start), "qr_code_text"));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "pending") << i;
  EXPECT_EQ(text_of(payload_of(*status(channel, session)), "status"), "expired");
}

TEST_F(wechat, a_media_download_that_keeps_failing_is_named_in_the_text_never_dropped_silently) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  auto media = api.add_media("x", "raw");
  api.add_fault("c2c/download", "http500", 3);
  auto m = wechat_text_message("ann@im.wechat", "see the picture", 6, "ctx");
  m["item_list"].as_array().push_back(json::object{{"type", 2}, {"image_item", {{"media", media.media}}}});
  api.add_message(token, m);
  auto got = messages(channel, 1, 40s);  // three tries within about 30 s
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(text_of(got[0], "text").find("[a file could not be fetched: wechat-image.jpg]"), std::string::npos)
      << json::serialize(got[0]);
}

TEST_F(wechat, the_tools_send_once_each_and_a_file_goes_encrypted_through_the_cdn) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  for (int i = 0; i < 2; ++i) {
    auto ack = dp->invoke(channel, "wechat_message_send", {{"text", "deploy finished"}}, {{"tool_call_id", "call-7"}});
    ASSERT_TRUE(ack);
    EXPECT_EQ(error_code(*ack), "") << json::serialize(*ack);
    auto result = payload_of(*ack)["result"].as_object();
    EXPECT_EQ(text_of(result, "status"), "sent");
    EXPECT_EQ(text_of(result, "recipient_ref"), owner);  // nobody wrote yet: the signed-in user
    EXPECT_GT(result.at("sent_at").to_number<std::int64_t>(), 0);
  }
  EXPECT_EQ(sent().size(), 1u);

  auto ref = upload(channel, random_bytes(5000), "report.pdf", "application/pdf");
  ASSERT_FALSE(ref.empty());
  std::optional<json::object> ack;
  for (int i = 0; i < 2; ++i)  // one tool_call_id: sent once
    ack = dp->invoke(channel, "wechat_message_send_media", {{"file_ref", ref}, {"text", "the report"}},
                     {{"tool_call_id", "call-8"}});
  ASSERT_TRUE(ack);
  ASSERT_EQ(error_code(*ack), "") << json::serialize(*ack);
  auto result = payload_of(*ack)["result"].as_object();
  EXPECT_EQ(text_of(result, "media_type"), "file");
  EXPECT_EQ(text_of(result, "filename"), "report.pdf");
  EXPECT_EQ(result.at("byte_size").to_number<int>(), 5000);
  auto uploads = api.state()["uploads"].as_array();
  ASSERT_EQ(uploads.size(), 1u);
  EXPECT_TRUE(uploads[0].at("ok").as_bool()) << json::serialize(uploads[0]);
  auto out = sent();
  ASSERT_EQ(out.size(), 3u);  // the first tool's text, this text, the file
  EXPECT_EQ(text_item_of(out[1]), "the report");
  auto item = out[2].at("item_list").as_array().at(0).as_object();
  EXPECT_EQ(item.at("type").to_number<int>(), 4);
  EXPECT_EQ(text_of(item.at("file_item").as_object(), "file_name"), "report.pdf");
  auto missing = dp->invoke(channel, "wechat_message_send_media", {{"file_ref", "file_nope"}});
  ASSERT_TRUE(missing);
  EXPECT_EQ(error_code(*missing), "file_ref_not_found");
}

TEST_F(wechat, a_send_refused_by_wechats_rules_is_not_retryable_429_and_5xx_are_and_minus_14_expires_the_channel) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  api.add_fault("sendmessage", "ret:-2");
  auto ack = dp->request("chat.message", {{"message_id", "r-1"}, {"text", "too late"}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "rejected") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "send_failed");
  EXPECT_EQ(payload_of(*ack).at("retryable"), false);

  api.add_fault("sendmessage", "http429");  // slowed down, not refused: retryable
  ack = dp->request("chat.message", {{"message_id", "r-2"}, {"text", "later"}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "rate_limited") << json::serialize(*ack);
  EXPECT_EQ(payload_of(*ack).at("retryable"), true);
  api.add_fault("sendmessage", "http500");
  ack = dp->request("chat.message", {{"message_id", "r-3"}, {"text", "later"}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "target_unreachable") << json::serialize(*ack);
  EXPECT_EQ(payload_of(*ack).at("retryable"), true);

  api.expire_token(token);
  EXPECT_TRUE(wait_until([&] { return status_of(channel) == "expired"; }, 10s)) << status_of(channel);
  auto tool = dp->invoke(channel, "wechat_message_send", {{"text", "still there?"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "connection_not_authenticated");
}

TEST_F(wechat, a_bot_signed_in_on_a_second_channel_revokes_the_first) {
  auto first = signed_in();
  ASSERT_FALSE(first.empty());
  auto second = signed_in("ilink-planted-second-token-77a1", bot);
  ASSERT_FALSE(second.empty());
  EXPECT_TRUE(wait_until([&] { return status_of(first) == "revoked"; }, 10s)) << status_of(first);
  EXPECT_EQ(status_of(second), "connected");
}

TEST_F(wechat, typing_asks_for_a_ticket_and_shows_it_to_the_last_sender) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  api.add_message(token, wechat_text_message("ann@im.wechat", "hi", 1, "ctx-ann"));
  ASSERT_EQ(messages(channel, 1).size(), 1u);
  dp->send("chat.activity", {{"status", "thinking"}}, channel);
  ASSERT_TRUE(wait_until([&] { return !api.state()["typing"].as_array().empty(); }, 10s));
  auto typing = api.state()["typing"].as_array()[0].as_object();
  EXPECT_EQ(text_of(typing, "ilink_user_id"), "ann@im.wechat");
  EXPECT_EQ(typing.at("status").to_number<int>(), 1);
}

TEST_F(wechat, a_restart_restores_the_channel_with_its_sealed_token_and_the_messages_waiting) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  api.add_message(token, wechat_text_message("ann@im.wechat", "before", 1, "ctx"));
  ASSERT_EQ(messages(channel, 1).size(), 1u);
  auto connector_id = dp->connector_id();
  dp.reset();
  server.stop();
  api.add_message(token, wechat_text_message("ann@im.wechat", "while down", 2, "ctx"));
  api.add_fault("getconfig", "http500", 1000);  // WeChat is away at the restart
  server.start();
  dp = dp_client::connect(server.port(), server.key(), "wechat", {{"connector_id", connector_id}});
  ASSERT_TRUE(dp);
  ASSERT_TRUE(dp->open_channel(channel));
  EXPECT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  api.clear_faults();  // back: connected by itself
  EXPECT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 15s)) << status_of(channel);
  auto got = messages(channel, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(text_of(got[0], "text"), "while down");
  EXPECT_FALSE(dp->next_push("chat.message", channel, 1s));
  dp.reset();
  server.stop();
  EXPECT_EQ(read_file(server.dir().path() / "store" / "data.mdb").find(token), std::string::npos);
  server.start();
}

// iLink keeps messages until a cursor passes them; the daemon is SIGKILLed while they stream in: after the restart
// every message is delivered exactly once, in order.
TEST(wechat_kill9, a_kill_9_mid_stream_loses_and_repeats_nothing) {
  fake_ilink api;
  api.poll_hold_ms(500);
  api.batch_size(10);
  const std::string key = "xck_wechat_key_0123456789abcdef00";
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml",
             test_daemon_config(plugin_dir(), "  allow: [wechat]\nconnectors:\n  wechat:\n    config:\n"
                                              "      api_base_url: \"" + api.base_url() + "\"\n"
                                              "      cdn_base_url: \"" + api.cdn_base_url() + "\"\n"));
  unsigned short port = 0;
  auto d = start_test_daemon(dir.path(), key, port);
  ASSERT_NE(port, 0);
  constexpr int count = 200;
  std::string channel, connector_id;
  std::set<std::string> seen;
  std::vector<std::string> delivered;
  {
    auto c = dp_client::connect(port, key, "wechat");
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = qr_signed_in(*c, api);
    ASSERT_FALSE(channel.empty());
    std::thread writer([&] {
      for (int i = 1; i <= count; ++i)
        api.add_message(token, wechat_text_message("ann@im.wechat", "m" + std::to_string(i), 1000 + i, "ctx"));
    });
    delivered = read_texts(*c, channel, 40, seen);  // killed once the stream is well under way
    d->signal(SIGKILL);
    writer.join();
  }
  ASSERT_EQ(d->wait_exit(), 128 + SIGKILL);
  d = start_test_daemon(dir.path(), key, port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, key, "wechat", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  auto rest = read_texts(*c, channel, count, seen);
  delivered.insert(delivered.end(), rest.begin(), rest.end());
  ASSERT_EQ(delivered.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) EXPECT_EQ(delivered[i], "m" + std::to_string(i + 1));
}

// 1,000 messages waiting at the fake reach the agent once each and in order; the rate, end to end with every ack,
// is recorded as messages_per_second (docs/wechat.md reports it; measured here, never asserted). Then 16 images of
// 1 MiB each: the rate of fetching, decrypting and storing them is recorded as media_mib_per_second.
TEST_F(wechat, a_thousand_waiting_messages_arrive_once_each_in_order_and_the_rates_are_recorded) {
  auto channel = signed_in();
  ASSERT_FALSE(channel.empty());
  constexpr int count = 1000;
  api.batch_size(100);
  json::array burst;
  for (int i = 1; i <= count; ++i)
    burst.push_back(wechat_text_message("ann@im.wechat", "u" + std::to_string(i), 5000 + i, "ctx"));
  auto started = std::chrono::steady_clock::now();
  api.add_messages(token, burst);
  std::set<std::string> seen;
  auto texts = read_texts(*dp, channel, count, seen, 20s);
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  RecordProperty("messages_per_second", static_cast<int>(texts.size() / seconds));
  ASSERT_EQ(texts.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) ASSERT_EQ(texts[i], "u" + std::to_string(i + 1));

  constexpr int images = 16;
  json::array with_media;
  for (int i = 0; i < images; ++i) {
    auto media = api.add_media(random_bytes(1 << 20), "raw");
    auto m = wechat_text_message("ann@im.wechat", "", 9000 + i, "ctx");
    m["item_list"] = json::array{json::object{{"type", 2}, {"image_item", {{"media", media.media}}}}};
    with_media.push_back(m);
  }
  started = std::chrono::steady_clock::now();
  api.add_messages(token, with_media);
  auto got = read_texts(*dp, channel, images, seen, 30s);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  RecordProperty("media_mib_per_second", static_cast<int>(got.size() / seconds));
  ASSERT_EQ(got.size(), static_cast<std::size_t>(images));
}

// The bot token reaches no ack, log line, event, metric, health answer or store byte.
TEST(wechat_secrets, the_token_is_nowhere_but_the_sealed_store) {
  log_capture logs;
  fake_ilink api;
  api.poll_hold_ms(500);
  std::optional<server_fixture> server(std::in_place, std::vector<std::string>{"wechat.so"}, [&](config& c) {
    c.connectors["wechat"].config = {{"api_base_url", api.base_url()}, {"cdn_base_url", api.cdn_base_url()}};
  });
  server->start();
  {
    auto dp = dp_client::connect(server->port(), server->key(), "wechat");
    ASSERT_TRUE(dp);
    auto channel = qr_signed_in(*dp, api);
    ASSERT_FALSE(channel.empty());
    api.add_message(token, wechat_text_message("ann@im.wechat", "hi", 1, "ctx"));
    std::set<std::string> seen;
    ASSERT_EQ(read_texts(*dp, channel, 1, seen).size(), 1u);
    api.add_fault("sendmessage", "ret:-2");
    dp->request("chat.message", {{"message_id", "refused"}, {"text", "x"}}, channel, 15s);
    auto tool = dp->invoke(channel, "wechat_message_send", {{"text", "hello"}});
    ASSERT_TRUE(tool);
    for (const auto& text : dp->received()) EXPECT_EQ(text.find(token), std::string::npos) << text;
    for (const auto& route : {"/metrics", "/connectors/wechat/events?limit=1000", "/connectors/wechat/health"}) {
      auto r = http_get(server->port(), route, server->key());
      EXPECT_EQ(r.body.find(token), std::string::npos) << route;
    }
  }
  server->stop();
  EXPECT_EQ(read_file(server->dir().path() / "store" / "data.mdb").find(token), std::string::npos);
  server.reset();
  EXPECT_EQ(logs.text().find(token), std::string::npos);
  EXPECT_EQ(logs.text().find("planted-bot"), std::string::npos);
}

}  // namespace
}  // namespace xconn::test
