// The telegram plugin (docs/adapters.md "telegram") on the real server, against the fake Bot API on loopback
// (tests/fakes/fake_bot_api.py): sign-in and its refusals, inbound updates to chat.message with the offset kept,
// a final to sendMessage, one poller per token, an idempotent tool, a restart with updates waiting, the token
// nowhere but the sealed store, and emits the host would refuse (long names cut, an invalid update skipped, an
// update_id of INT64_MAX).
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/fake_telegram.hpp"
#include "support/files_helpers.hpp"
#include "support/log_capture.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <limits>
#include <map>
#include <set>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string token = "123456:AAH-planted-telegram-token-9f8e";
constexpr long long bot_id = 123456;
constexpr long long group_id = -1001234567890;

// Reads chat.message pushes on channel until count distinct texts or the deadline between two; acks each. The texts
// in order of first delivery (a redelivery of a message seen before is not counted twice).
std::vector<std::string> read_texts(dp_client& c, const std::string& channel, std::size_t count,
                                    std::set<std::string>& seen_ids, std::chrono::milliseconds gap = 5s) {
  std::vector<std::string> texts;
  while (texts.size() < count) {
    auto m = c.next_push("chat.message", channel, gap);
    if (!m) break;
    auto p = payload_of(*m);
    c.send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    if (seen_ids.insert(text_of(p, "message_id")).second) texts.push_back(text_of(p, "text"));
  }
  return texts;
}

class telegram : public ::testing::Test {
 protected:
  telegram()
      : server({"telegram.so"}, [this](config& c) {
          c.connectors["telegram"].config = {{"api_base_url", api.base_url()}, {"poll_timeout_s", 1}};
        }) {
    api.add_bot(token, bot_id, "xconn_bot");
    api.add_chat(group_id, "supergroup", "Ops room");
    api.add_chat(42, "private", "Ann");
  }
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "telegram");
    ASSERT_TRUE(dp);
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  std::optional<json::object> sign_in(const std::string& channel, const std::string& bot_token,
                                      const std::string& chat_id) {
    return dp->auth_start(channel, "telegram_bot_binding", json::object{{"bot_token", bot_token}, {"chat_id", chat_id}});
  }
  std::string bound(const std::string& chat_id = std::to_string(group_id)) {
    return dp->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", chat_id}});
  }
  // The messages the bot sent with this method.
  std::vector<json::object> sent(const std::string& method = "sendMessage") {
    std::vector<json::object> out;
    auto state = api.state();
    for (const auto& s : state["sent"].as_array())
      if (text_of(s.as_object(), "method") == method) out.push_back(s.as_object());
    return out;
  }

  fake_telegram api;
  server_fixture server;
  std::unique_ptr<dp_client> dp;
};

TEST_F(telegram, a_bot_and_chat_sign_in_with_the_chat_title_and_a_masked_hint_and_refusals_have_their_codes) {
  auto channel = dp->open();
  auto ack = sign_in(channel, token, std::to_string(group_id));
  ASSERT_TRUE(ack);
  ASSERT_EQ(text_of(payload_of(*ack), "status"), "authenticated") << json::serialize(*ack);
  auto target = descriptor_in(*ack)["target"].as_object();
  EXPECT_EQ(text_of(target, "display_name"), "Ops room");
  EXPECT_EQ(text_of(target, "account_hint"), "@xconn_bot / chat -10*********90");
  EXPECT_EQ(text_of(descriptor_in(*ack)["connection"].as_object(), "status"), "connected");

  auto refused = [&](const std::string& bot_token, const std::string& chat) {
    auto a = sign_in(dp->open(), bot_token, chat);
    return a ? error_code(*a) : std::string("no answer");
  };
  EXPECT_EQ(refused("999:not-a-known-token", "42"), "invalid_credentials");
  EXPECT_EQ(refused(token, "777"), "chat_not_found");
  EXPECT_EQ(refused(token, std::to_string(bot_id)), "invalid_chat");
}

TEST_F(telegram, an_update_becomes_a_chat_message_and_a_final_becomes_send_message) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  api.add_update(token, telegram_text(group_id, "supergroup", 7, 555, "Bo", "where is the report?"));
  auto m = dp->next_push("chat.message", channel, 10s);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "text"), "where is the report?");
  dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);

  auto sent_ack = dp->request("chat.message", {{"message_id", "reply-1"}, {"text", "in the shared folder"}}, channel, 10s);
  ASSERT_TRUE(sent_ack);
  EXPECT_EQ(text_of(payload_of(*sent_ack), "status"), "accepted") << json::serialize(*sent_ack);
  auto out = sent();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].at("text"), "in the shared folder");
  EXPECT_EQ(out[0].at("chat_id").to_number<long long>(), group_id);
  EXPECT_EQ(text_of(payload_of(*sent_ack), "external_key"),
            std::to_string(group_id) + ":" + std::to_string(out[0].at("message_id").to_number<long long>()));
}

TEST_F(telegram, a_reply_brings_its_quoted_message_as_context) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto reply = telegram_text(group_id, "supergroup", 21, 556, "Cy", "and this one?");
  reply["reply_to_message"] = telegram_text(group_id, "supergroup", 20, 555, "Bo", "the deploy broke staging");
  api.add_update(token, reply);
  auto m = dp->next_push("chat.message", channel, 10s);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  auto context = p.at("context").as_array();
  ASSERT_EQ(context.size(), 1u) << json::serialize(p);
  EXPECT_EQ(context[0].at("text"), "the deploy broke staging");
  EXPECT_EQ(context[0].at("sender_name"), "Bo");
  EXPECT_NE(text_of(p, "text").find("and this one?"), std::string::npos);
}

// 2,000 updates at once (twenty full getUpdates pages) reach the agent once each and in order. The rate, end to end
// with every ack, is recorded as the test's property updates_per_second (docs/telegram.md reports it; it is
// measured here, never asserted).
TEST_F(telegram, a_burst_of_updates_arrives_once_each_and_in_order) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  constexpr int count = 2000;
  json::array burst;
  for (int i = 1; i <= count; ++i) burst.push_back(telegram_text(group_id, "supergroup", i, 555, "Bo", "u" + std::to_string(i)));
  auto started = std::chrono::steady_clock::now();
  api.add_updates(token, burst);
  std::set<std::string> seen;
  auto texts = read_texts(*dp, channel, count, seen, 20s);  // a generous gap: ASan under a parallel build is slow
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  RecordProperty("updates_per_second", static_cast<int>(texts.size() / seconds));
  ASSERT_EQ(texts.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) ASSERT_EQ(texts[i], "u" + std::to_string(i + 1));
}

TEST_F(telegram, calls_reuse_their_connections) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto before = api.state().at("connections").to_number<int>();
  for (int i = 0; i < 6; ++i) {
    auto ack = dp->invoke(channel, "telegram_message_send", {{"text", "ping " + std::to_string(i)}});
    ASSERT_TRUE(ack && error_code(*ack).empty());
  }
  // Six sends in a row, and the long polls meanwhile: far fewer new connections than calls.
  EXPECT_LE(api.state().at("connections").to_number<int>() - before, 2);
}

TEST_F(telegram, three_channels_on_one_token_share_one_poller_and_each_gets_its_own_chat) {
  auto a = bound(), b = bound(), direct = bound("42");
  ASSERT_FALSE(a.empty() || b.empty() || direct.empty());
  api.add_update(token, telegram_text(42, "private", 3, 42, "Ann", "just for the direct one"));
  auto m = dp->next_push("chat.message", direct, 10s);
  ASSERT_TRUE(m);
  EXPECT_EQ(text_of(payload_of(*m), "text"), "just for the direct one");
  EXPECT_FALSE(dp->next_push("chat.message", a, 300ms));
  // Several long polls have run by now: never two at once for this bot.
  ASSERT_TRUE(wait_until([&] { return api.state()["polls"].as_object()[std::to_string(bot_id)].at("calls").to_number<int>() >= 3; }, 10s));
  EXPECT_EQ(api.state()["polls"].as_object()[std::to_string(bot_id)].at("max_active"), 1);
}

TEST_F(telegram, a_side_effect_tool_with_one_tool_call_id_sends_once) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  for (int i = 0; i < 2; ++i) {
    auto ack = dp->invoke(channel, "telegram_message_send", {{"text", "deploy finished"}}, {{"tool_call_id", "call-7"}});
    ASSERT_TRUE(ack);
    EXPECT_EQ(error_code(*ack), "") << json::serialize(*ack);
    EXPECT_EQ(text_of(payload_of(*ack)["result"].as_object(), "status"), "sent");
  }
  EXPECT_EQ(sent().size(), 1u);
}

TEST_F(telegram, updates_waiting_through_a_restart_are_delivered_once_and_the_channel_is_verified_again) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto connector_id = dp->connector_id();
  api.add_update(token, telegram_text(group_id, "supergroup", 1, 555, "Bo", "before"));
  auto first = dp->next_push("chat.message", channel, 10s);
  ASSERT_TRUE(first);
  dp->send("chat.message.ack", {{"message_id", payload_of(*first).at("message_id")}, {"status", "accepted"}}, channel);
  dp.reset();
  server.stop();
  api.add_update(token, telegram_text(group_id, "supergroup", 2, 555, "Bo", "while down"));
  server.start();
  dp = dp_client::connect(server.port(), server.key(), "telegram", {{"connector_id", connector_id}});
  ASSERT_TRUE(dp);
  ASSERT_TRUE(dp->open_channel(channel));
  EXPECT_TRUE(wait_until([&] {
    auto d = dp->get_descriptor(channel);
    return d && text_of(descriptor_in(*d)["connection"].as_object(), "status") == "connected";
  }, 10s));
  std::vector<std::string> texts;
  while (auto m = dp->next_push("chat.message", channel, 2s)) {
    texts.push_back(text_of(payload_of(*m), "text"));
    dp->send("chat.message.ack", {{"message_id", payload_of(*m).at("message_id")}, {"status", "accepted"}}, channel);
  }
  EXPECT_EQ(texts, std::vector<std::string>{"while down"});
}

TEST_F(telegram, a_409_degrades_the_plugin_until_a_poll_succeeds_and_a_429_on_send_is_waited_out) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto adapter = [&] {
    auto h = http_get(server.port(), "/connectors/telegram/health", server.key()).json();
    return h.is_object() ? h.at("adapter").as_object() : json::object{};
  };
  api.add_fault("getUpdates", 409, "Conflict: terminated by other getUpdates request", 2);
  EXPECT_TRUE(wait_until([&] { return text_of(adapter(), "last_error_code") == "telegram_conflict"; }, 10s));
  EXPECT_TRUE(wait_until([&] { return text_of(adapter(), "health") == "healthy"; }, 15s)) << json::serialize(adapter());

  api.add_fault("sendMessage", 429, "Too Many Requests: retry after 1", 1, 1);
  auto ack = dp->request("chat.message", {{"message_id", "after-429"}, {"text", "patience"}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  EXPECT_EQ(sent().size(), 1u);
  // The plugin's own counters in /metrics.
  auto metrics = http_get(server.port(), "/metrics", server.key()).body;
  auto counted = [&](const std::string& name) {
    auto line = "xconn_plugin_events_total{plugin=\"telegram\",name=\"" + name + "\"} ";
    auto at = metrics.find(line);
    return at == std::string::npos ? -1 : std::stoi(metrics.substr(at + line.size()));
  };
  EXPECT_GE(counted("polls"), 1) << metrics;
  EXPECT_EQ(counted("errors_409"), 2) << metrics;
  EXPECT_EQ(counted("errors_429"), 1);
  EXPECT_EQ(counted("rate_limit_waits"), 1);
  EXPECT_EQ(counted("sends"), 1);
}

TEST_F(telegram, a_429_holds_every_call_of_that_token_until_retry_after_has_passed) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  api.add_fault("sendMessage", 429, "Too Many Requests: retry after 2", 1, 2);
  auto now_s = [] { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); };
  auto started = now_s();
  // The tool's call meets the 429 first; the final, sent once it has, must wait out the same hold.
  auto tool_packet = dp->send("tool.invoke", {{"tool_id", "telegram_message_send"}, {"arguments", {{"text", "first"}}}}, channel);
  ASSERT_TRUE(wait_until([&] { return api.state().at("faults_left").to_number<int>() == 0; }, 10s));
  auto final_packet = dp->send("chat.message", {{"message_id", "held-1"}, {"text", "second"}}, channel);
  auto tool = dp->answer(tool_packet, 15s);
  auto ack = dp->answer(final_packet, 15s);
  ASSERT_TRUE(ack && tool);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  EXPECT_EQ(error_code(*tool), "") << json::serialize(*tool);
  auto out = sent();
  ASSERT_EQ(out.size(), 2u);
  for (const auto& m : out) EXPECT_GE(m.at("at").to_number<double>(), started + 1.9) << json::serialize(m);
}

TEST_F(telegram, a_token_refused_while_polling_turns_its_channels_revoked) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  api.add_fault("getUpdates", 401, "Unauthorized", 1000);
  EXPECT_EQ(last_pushed_status(*dp, channel, "revoked", 10s), "revoked");
  auto ack = dp->invoke(channel, "telegram_message_send", {{"text", "x"}});
  ASSERT_TRUE(ack);
  EXPECT_EQ(error_code(*ack), "connection_not_authenticated");
}

TEST_F(telegram, a_403_on_a_chat_revokes_that_channel_only) {
  auto kicked = bound(), other = bound("42");
  ASSERT_FALSE(kicked.empty() || other.empty());
  api.add_fault("sendMessage", 403, "Forbidden: bot was kicked from the supergroup chat");
  auto ack = dp->request("chat.message", {{"message_id", "to-kicked"}, {"text", "hello?"}}, kicked, 10s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "rejected");
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "telegram_forbidden");
  EXPECT_EQ(last_pushed_status(*dp, kicked, "revoked", 5s), "revoked");
  auto d = dp->get_descriptor(other);
  ASSERT_TRUE(d);
  EXPECT_EQ(text_of(descriptor_in(*d)["connection"].as_object(), "status"), "connected");
}

TEST_F(telegram, the_last_sign_out_of_a_token_stops_its_poller) {
  auto a = bound(), b = bound();
  ASSERT_FALSE(a.empty() || b.empty());
  auto calls = [&] {
    auto state = api.state();
    auto& polls = state["polls"].as_object();
    auto* bot = polls.if_contains(std::to_string(bot_id));
    return bot ? bot->at("calls").to_number<int>() : 0;
  };
  ASSERT_TRUE(wait_until([&] { return calls() >= 2; }, 10s));
  ASSERT_TRUE(dp->request("auth.logout", {}, a));
  auto still = calls();
  EXPECT_TRUE(wait_until([&] { return calls() >= still + 2; }, 10s)) << "one channel still holds the poller";
  ASSERT_TRUE(dp->request("auth.logout", {}, b));
  // The poll in flight may end; no new one starts after it.
  std::this_thread::sleep_for(1500ms);  // longer than one poll (poll_timeout_s = 1): a running poller would ask again
  auto after = calls();
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(calls(), after);
}

// Two answers streamed at once into one chat: each is one Telegram message, and the chat sees at most one delta
// edit a second between them (a final's own edit goes at once).
TEST_F(telegram, deltas_create_one_message_edited_at_most_once_a_second_per_chat_and_the_final_edits_it_whole) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  dp->send("chat.activity", {{"status", "thinking"}}, channel);
  EXPECT_TRUE(wait_until([&] { return sent("sendChatAction").size() == 1; }, 5s));
  std::string text;
  for (int seq = 1; seq <= 12; ++seq) {
    text += "word" + std::to_string(seq) + " ";
    for (std::string live : {"live-1", "live-2"})
      dp->send("chat.message.delta", {{"message_id", live}, {"sequence", seq}, {"text", live + ": " + text}}, channel);
    std::this_thread::sleep_for(150ms);  // a stream of deltas over about two seconds, as a model writes
  }
  std::map<std::string, std::string> external_key;
  for (std::string live : {"live-2", "live-1"}) {
    auto ack = dp->request("chat.message", {{"message_id", live}, {"text", live + ": " + text + "done."}}, channel, 15s);
    ASSERT_TRUE(ack);
    EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
    external_key[live] = text_of(payload_of(*ack), "external_key");
  }
  auto created = sent("sendMessage");
  ASSERT_EQ(created.size(), 2u) << "one message each, created by its first delta";
  std::map<std::string, long long> telegram_id;  // live-N → the message its first delta created
  for (const auto& m : created) telegram_id[text_of(m, "text").substr(0, 6)] = m.at("message_id").to_number<long long>();
  auto edits = sent("editMessageText");
  double last_delta_edit = -1;
  std::map<long long, std::string> last_text;
  for (const auto& e : edits) {
    auto edited = text_of(e, "text");
    last_text[e.at("message_id").to_number<long long>()] = edited;
    if (edited.ends_with("done.")) continue;  // a final's own edit
    auto at = e.at("at").to_number<double>();
    if (last_delta_edit >= 0) {
      EXPECT_GE(at - last_delta_edit, 0.95) << edited;
    }
    last_delta_edit = at;
  }
  EXPECT_GE(edits.size(), 4u);
  for (std::string live : {"live-1", "live-2"}) {
    EXPECT_EQ(last_text[telegram_id[live]], live + ": " + text + "done.");
    EXPECT_EQ(external_key[live], std::to_string(group_id) + ":" + std::to_string(telegram_id[live]));
  }
}

TEST_F(telegram, a_photo_and_a_document_arrive_as_files_whose_download_urls_serve_the_same_bytes) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  const std::string photo_bytes = random_bytes(70000), doc_bytes = "quarterly numbers\n";
  api.add_file("ph-big", "photos/file_1.jpg", photo_bytes);
  api.add_file("doc-1", "documents/file_2.txt", doc_bytes);
  auto photo = telegram_text(group_id, "supergroup", 11, 555, "Bo", "");
  photo.erase("text");
  photo["caption"] = "the whiteboard";
  photo["photo"] = json::array{json::object{{"file_id", "ph-small"}, {"width", 90}},
                               json::object{{"file_id", "ph-big"}, {"width", 1280}}};
  api.add_update(token, photo);
  auto doc = telegram_text(group_id, "supergroup", 12, 555, "Bo", "");
  doc.erase("text");
  doc["document"] = {{"file_id", "doc-1"}, {"file_name", "numbers.txt"}, {"mime_type", "text/plain"}};
  api.add_update(token, doc);

  std::vector<json::object> got;
  for (int i = 0; i < 2; ++i) {
    auto m = dp->next_push("chat.message", channel, 10s);
    ASSERT_TRUE(m);
    got.push_back(payload_of(*m));
    dp->send("chat.message.ack", {{"message_id", got.back().at("message_id")}, {"status", "accepted"}}, channel);
  }
  EXPECT_EQ(text_of(got[0], "text"), "the whiteboard");
  auto fetch = [&](const json::object& message) {
    const auto& files = message.at("files").as_array();
    EXPECT_EQ(files.size(), 1u);
    auto url = parse_url(text_of(files[0].as_object(), "download_url"));
    EXPECT_TRUE(url.ok);
    return std::make_pair(files[0].as_object(), http_call(server.port(), "GET", url.target()).body);
  };
  auto [photo_item, photo_got] = fetch(got[0]);
  EXPECT_EQ(text_of(photo_item, "type"), "image");
  EXPECT_TRUE(photo_got == photo_bytes) << "the photo's bytes differ";
  auto [doc_item, doc_got] = fetch(got[1]);
  EXPECT_EQ(text_of(doc_item, "filename"), "numbers.txt");
  EXPECT_EQ(doc_got, doc_bytes);
}

TEST_F(telegram, a_final_with_a_file_goes_as_a_photo_with_its_text_as_caption_and_the_media_tool_sends_a_document) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto upload = [&](const std::string& bytes, const std::string& name, const std::string& type) {
    auto r = http_call(server.port(), "POST", "/connectors/telegram/files/uploads",
                       {{"Authorization", "Bearer " + server.key()}, {"X-XAgent-Connector-Channel-ID", channel},
                        {"Content-Type", multipart_type()}},
                       multipart({file_part(bytes, name, type)}));
    EXPECT_EQ(r.status, 201) << r.body;
    return json::value_to<std::string>(r.json().at("file_ref"));
  };
  const std::string png = std::string("\x89PNG\r\n\x1A\n", 8) + random_bytes(3000);
  auto image = upload(png, "chart.png", "image/png");
  auto ack = dp->request("chat.message",
                         {{"message_id", "with-photo"}, {"text", "this quarter"},
                          {"files", json::array{json::object{{"type", "image"}, {"file_ref", image}}}}},
                         channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  auto photos = sent("sendPhoto");
  ASSERT_EQ(photos.size(), 1u);
  EXPECT_EQ(text_of(photos[0], "caption"), "this quarter");
  EXPECT_EQ(photos[0].at("photo").at("bytes").to_number<std::size_t>(), png.size());
  EXPECT_TRUE(sent("sendMessage").empty()) << "the text rode as the caption";

  auto doc = upload("plain notes", "notes.txt", "text/plain");
  auto tool = dp->invoke(channel, "telegram_message_send_media", {{"file_ref", doc}, {"caption", "notes"}});
  ASSERT_TRUE(tool);
  ASSERT_EQ(error_code(*tool), "") << json::serialize(*tool);
  auto result = payload_of(*tool)["result"].as_object();
  EXPECT_EQ(text_of(result, "media_type"), "file");
  EXPECT_EQ(text_of(result, "file_ref"), doc);
  EXPECT_EQ(sent("sendDocument").size(), 1u);
  auto missing = dp->invoke(channel, "telegram_message_send_media", {{"file_ref", "fr_0000000000000000000000"}});
  ASSERT_TRUE(missing);
  EXPECT_EQ(error_code(*missing), "file_ref_not_found");
}

// A server with telegram configured for api (plus extra config keys) and one sign-in: "authenticated", or the
// refusal's code.
std::string sign_in_outcome(fake_telegram& api, const json::object& extra) {
  server_fixture server({"telegram.so"}, [&](config& c) {
    c.connectors["telegram"].config = {{"api_base_url", api.base_url()}, {"poll_timeout_s", 1}};
    for (const auto& [k, v] : extra) c.connectors["telegram"].config[k] = v;
  });
  server.start();
  auto dp = dp_client::connect(server.port(), server.key(), "telegram");
  if (!dp) return "no socket";
  auto ack = dp->auth_start(dp->open(), "telegram_bot_binding",
                            json::object{{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
  if (!ack) return "no answer";
  return error_code(*ack).empty() ? text_of(payload_of(*ack), "status") : error_code(*ack);
}

// TLS is verified: a Bot API whose certificate no trusted CA signed is refused, unless config.ca_file names its CA.
TEST(telegram_tls, an_untrusted_certificate_is_refused_unless_ca_file_names_it) {
  fake_telegram api(true);
  api.add_bot(token, bot_id, "xconn_bot");
  api.add_chat(group_id, "group", "Ops room");
  for (bool trusted : {false, true}) {
    json::object extra;
    if (trusted) extra["ca_file"] = api.ca_file();
    EXPECT_EQ(sign_in_outcome(api, extra), trusted ? "authenticated" : "target_unreachable");
  }
}

// config.proxy: every Bot API request tunnels through an http:// proxy with CONNECT and Basic credentials
// (Debian's tinyproxy, started here on a loopback port); a wrong password, or a proxy that does not answer, makes
// the target unreachable.
TEST(telegram_proxy, requests_tunnel_through_an_http_proxy) {
  fake_telegram api;
  api.add_bot(token, bot_id, "xconn_bot");
  api.add_chat(group_id, "group", "Ops room");
  temp_dir dir;
  auto proxy_port = free_loopback_port();
  write_file(dir.path() / "tinyproxy.conf",
             "Port " + std::to_string(proxy_port) + "\nListen 127.0.0.1\nTimeout 60\nMaxClients 20\nAllow 127.0.0.1\n"
             "BasicAuth xconn planted-proxy-pass\nLogLevel Connect\nLogFile \"" +
                 (dir.path() / "tinyproxy.log").string() + "\"\n");
  daemon_process proxy({"-d", "-c", (dir.path() / "tinyproxy.conf").string()}, dir.path(), {}, "/usr/bin/tinyproxy");
  ASSERT_TRUE(wait_until([&] { return http_call(proxy_port, "GET", "/").status != 0; }, 10s)) << proxy.console();
  auto at = [](int port) { return "@127.0.0.1:" + std::to_string(port); };
  EXPECT_EQ(sign_in_outcome(api, {{"proxy", "http://xconn:planted-proxy-pass" + at(proxy_port)}}), "authenticated");
  EXPECT_EQ(sign_in_outcome(api, {{"proxy", "http://xconn:wrong-pass" + at(proxy_port)}}), "target_unreachable");
  EXPECT_EQ(sign_in_outcome(api, {{"proxy", "http://xconn:planted-proxy-pass" + at(free_loopback_port())}}),
            "target_unreachable");
  auto log = read_file(dir.path() / "tinyproxy.log");
  EXPECT_NE(log.find("CONNECT"), std::string::npos) << log;
  EXPECT_EQ(log.find(token), std::string::npos) << "the proxy saw the token";
}

// config.proxy = socks5://user:password@host:port (Debian's microsocks, started here with a user and password):
// sign-in, polling and delivery go through it; a wrong password is refused by the proxy (target_unreachable), and
// the proxy's password reaches no log line.
TEST(telegram_proxy, requests_tunnel_through_a_socks5_proxy_with_a_password) {
  log_capture logs;
  fake_telegram api;
  api.add_bot(token, bot_id, "xconn_bot");
  api.add_chat(group_id, "group", "Ops room");
  temp_dir dir;
  auto proxy_port = free_loopback_port();
  daemon_process proxy({"-i", "127.0.0.1", "-p", std::to_string(proxy_port), "-u", "xconn", "-P", "planted-socks-pass"},
                       dir.path(), {}, "/usr/bin/microsocks");
  auto listening = [&] {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket s(io);
    boost::system::error_code ec;
    s.connect({boost::asio::ip::make_address("127.0.0.1"), proxy_port}, ec);
    return !ec;
  };
  ASSERT_TRUE(wait_until(listening, 10s)) << proxy.console();
  auto via = [&](const std::string& password) {
    return "socks5://xconn:" + password + "@127.0.0.1:" + std::to_string(proxy_port);
  };
  EXPECT_EQ(sign_in_outcome(api, {{"proxy", via("wrong-pass")}}), "target_unreachable");

  server_fixture server({"telegram.so"}, [&](config& c) {
    c.connectors["telegram"].config = {
        {"api_base_url", api.base_url()}, {"poll_timeout_s", 1}, {"proxy", via("planted-socks-pass")}};
  });
  server.start();
  auto dp = dp_client::connect(server.port(), server.key(), "telegram");
  ASSERT_TRUE(dp);
  auto channel = dp->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
  ASSERT_FALSE(channel.empty());
  api.add_update(token, telegram_text(group_id, "group", 7001, 555, "Bo", "through socks"));
  auto message = dp->next_push("chat.message", channel, 20s);
  ASSERT_TRUE(message);
  EXPECT_EQ(text_of(payload_of(*message), "text"), "through socks");
  EXPECT_NE(proxy.console().find(":" + std::to_string(api.port())), std::string::npos) << proxy.console();
  EXPECT_EQ(logs.text().find("planted-socks-pass"), std::string::npos) << "the proxy's password was logged";
}


// Telegram keeps updates until an offset confirms them; the daemon is SIGKILLed while updates stream in: after the
// restart every update is delivered exactly once, in order, and none is lost.
TEST(telegram_kill9, a_kill_9_with_updates_waiting_delivers_each_once_after_the_restart) {
  fake_telegram api;
  api.add_bot(token, bot_id, "xconn_bot");
  api.add_chat(group_id, "group", "Ops room");
  const std::string key = "xck_telegram_key_0123456789abcdef";
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml",
             test_daemon_config(plugin_dir(), "  allow: [telegram]\nconnectors:\n  telegram:\n    config:\n"
                                              "      api_base_url: \"" + api.base_url() + "\"\n      poll_timeout_s: 1\n"));
  unsigned short port = 0;
  auto d = start_test_daemon(dir.path(), key, port);
  ASSERT_NE(port, 0);
  constexpr int updates = 200;
  std::string channel, connector_id;
  std::set<std::string> seen;
  std::vector<std::string> delivered;
  {
    auto c = dp_client::connect(port, key, "telegram");
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
    ASSERT_FALSE(channel.empty());
    std::thread writer([&] {
      for (int i = 1; i <= updates; ++i)
        api.add_update(token, telegram_text(group_id, "group", i, 555, "Bo", "update " + std::to_string(i)));
    });
    delivered = read_texts(*c, channel, 40, seen);  // killed once the stream is well under way
    d->signal(SIGKILL);
    writer.join();
  }
  ASSERT_EQ(d->wait_exit(), 128 + SIGKILL);
  d = start_test_daemon(dir.path(), key, port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, key, "telegram", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  auto rest = read_texts(*c, channel, updates, seen);
  delivered.insert(delivered.end(), rest.begin(), rest.end());
  ASSERT_EQ(delivered.size(), static_cast<std::size_t>(updates));
  for (int i = 0; i < updates; ++i) EXPECT_EQ(delivered[i], "update " + std::to_string(i + 1));
}

// A new build of telegram.so taken while updates stream in: the agent's socket stays open, and every update is
// delivered once, in order.
TEST(telegram_reload, a_hot_reload_under_traffic_loses_and_repeats_nothing_and_keeps_the_socket) {
  fake_telegram api;
  api.add_bot(token, bot_id, "xconn_bot");
  api.add_chat(group_id, "group", "Ops room");
  server_fixture server({"telegram.so"}, [&](config& c) {
    c.connectors["telegram"].config = {{"api_base_url", api.base_url()}, {"poll_timeout_s", 1}};
  });
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "telegram");
  ASSERT_TRUE(c);
  auto channel = c->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
  ASSERT_FALSE(channel.empty());
  constexpr int updates = 150;
  std::thread writer([&] {
    for (int i = 1; i <= updates; ++i) {
      api.add_update(token, telegram_text(group_id, "group", i, 555, "Bo", "update " + std::to_string(i)));
      std::this_thread::sleep_for(10ms);  // a stream over about two seconds, so the reloads fall inside it
    }
  });
  std::set<std::string> seen;
  auto delivered = read_texts(*c, channel, 20, seen);
  for (int reload = 0; reload < 2; ++reload) {
    ASSERT_EQ(http_call(server.port(), "POST", "/connectors/telegram/reload", {{"Authorization", "Bearer " + server.key()}}).status, 202);
    auto more = read_texts(*c, channel, 30, seen);
    delivered.insert(delivered.end(), more.begin(), more.end());
  }
  writer.join();
  auto rest = read_texts(*c, channel, updates, seen);
  delivered.insert(delivered.end(), rest.begin(), rest.end());
  ASSERT_EQ(delivered.size(), static_cast<std::size_t>(updates));
  for (int i = 0; i < updates; ++i) EXPECT_EQ(delivered[i], "update " + std::to_string(i + 1));
  auto pong = c->request("ping");
  ASSERT_TRUE(pong) << "the agent's socket was dropped";
  EXPECT_EQ(text_of(*pong, "type"), "pong");
  auto list = http_get(server.port(), "/connectors", server.key()).json();
  EXPECT_GE(list.at("connectors").as_array().at(0).at("generation").to_number<int>(), 3);
}

TEST(telegram_secrets, the_token_reaches_no_log_line_event_metric_descriptor_or_store_byte) {
  log_capture logs;
  fake_telegram api;
  api.add_bot(token, bot_id, "xconn_bot");
  api.add_chat(group_id, "group", "Ops room");
  std::optional<server_fixture> server(std::in_place, std::vector<std::string>{"telegram.so"}, [&](config& c) {
    c.connectors["telegram"].config = {{"api_base_url", api.base_url()}, {"poll_timeout_s", 1}};
  });
  server->start();
  {
    auto dp = dp_client::connect(server->port(), server->key(), "telegram");
    ASSERT_TRUE(dp);
    auto channel = dp->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
    ASSERT_FALSE(channel.empty());
    auto bad = dp->auth_start(dp->open(), "telegram_bot_binding", json::object{{"bot_token", token + "x"}, {"chat_id", "1"}});
    ASSERT_TRUE(bad);
    for (const auto& text : dp->received()) EXPECT_EQ(text.find(token), std::string::npos) << text;
    for (const auto& route : {"/metrics", "/connectors/telegram/events?limit=1000", "/connectors/telegram/health"}) {
      auto r = http_get(server->port(), route, server->key());
      EXPECT_EQ(r.body.find(token), std::string::npos) << route;
    }
  }
  server->stop();
  EXPECT_EQ(read_file(server->dir().path() / "store" / "data.mdb").find(token), std::string::npos);
  server.reset();
  EXPECT_EQ(logs.text().find(token), std::string::npos);
  EXPECT_EQ(logs.text().find("planted-telegram"), std::string::npos);
}

// Emits the host refuses (docs/plugin-api.md "Refused emits"). A name or title longer than the host's 256 bytes is cut
// between code points, so the message comes through; one the plugin cannot make valid is skipped for good with an
// `error` event, and the updates after it still arrive.
std::string copies_of(std::string_view piece, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += piece;
  return out;
}
const std::string cjk_char = "\xE5\xAD\x97";        // U+5B57
const std::string emoji_char = "\xF0\x9F\x98\x80";  // U+1F600

TEST_F(telegram, names_and_titles_over_256_bytes_are_cut_between_code_points_and_the_messages_arrive) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto cjk_name = telegram_text(group_id, "supergroup", 31, 601, copies_of(cjk_char, 64), "from a long CJK name");
  cjk_name["from"].as_object()["last_name"] = copies_of(cjk_char, 64);
  auto emoji_name = telegram_text(group_id, "supergroup", 32, 602, copies_of(emoji_char, 32), "from a long emoji name");
  emoji_name["from"].as_object()["last_name"] = copies_of(emoji_char, 32);
  auto control_name = telegram_text(group_id, "supergroup", 33, 603, "Ann\nLee", "from a name with a newline");
  control_name["date"] = std::numeric_limits<long long>::max();  // its milliseconds do not fit: sent without them
  // A channel's post has no sender: the chat's title (up to 128 characters) names it.
  json::object post{{"message_id", 34}, {"date", 1790000000}, {"text", "a post under a long title"},
                    {"chat", {{"id", group_id}, {"type", "channel"}, {"title", copies_of(cjk_char, 128)}}}};
  api.add_update(token, cjk_name);
  api.add_update(token, emoji_name);
  api.add_update(token, control_name);
  api.add_raw_update(token, {{"channel_post", post}});

  std::map<std::string, std::string> names;  // text -> sender_name
  for (int i = 0; i < 4; ++i) {
    auto m = dp->next_push("chat.message", channel, 10s);
    ASSERT_TRUE(m) << "only " << i << " of 4 arrived";
    auto p = payload_of(*m);
    dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    names[text_of(p, "text")] = p.contains("sender") ? text_of(p.at("sender").as_object(), "name") : "";
  }
  EXPECT_EQ(names["from a long CJK name"], copies_of(cjk_char, 64) + " " + copies_of(cjk_char, 21));       // 256 bytes
  EXPECT_EQ(names["from a long emoji name"], copies_of(emoji_char, 32) + " " + copies_of(emoji_char, 31));  // 253 bytes
  EXPECT_EQ(names["from a name with a newline"], "Ann Lee");
  EXPECT_EQ(names["a post under a long title"], copies_of(cjk_char, 85));                             // 255 bytes
}

TEST_F(telegram, a_chat_whose_title_is_over_256_bytes_signs_in_under_the_title_cut_between_code_points) {
  constexpr long long long_titled = -1009876543210;
  api.add_chat(long_titled, "supergroup", copies_of(emoji_char, 100));
  auto ack = sign_in(dp->open(), token, std::to_string(long_titled));
  ASSERT_TRUE(ack);
  ASSERT_EQ(text_of(payload_of(*ack), "status"), "authenticated") << json::serialize(*ack);
  EXPECT_EQ(text_of(descriptor_in(*ack)["target"].as_object(), "display_name"), copies_of(emoji_char, 64));
}

TEST_F(telegram, an_update_the_host_refuses_is_skipped_with_an_error_event_and_the_next_one_arrives) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  log_capture logs;
  // Over the host's 64 KiB of text (Telegram's own limit is 4,096 characters): a message the plugin must not cut,
  // so the host refuses it as invalid_message, every time it is asked.
  std::string planted;
  while (planted.size() <= 70000) planted += "planted-refused-text ";
  api.add_update(token, telegram_text(group_id, "supergroup", 41, 555, "Bo", planted));
  api.add_update(token, telegram_text(group_id, "supergroup", 42, 555, "Bo", "the one after it"));

  auto m = dp->next_push("chat.message", channel, 10s);
  ASSERT_TRUE(m) << "the update after a refused one never arrived";
  EXPECT_EQ(text_of(payload_of(*m), "text"), "the one after it");
  dp->send("chat.message.ack", {{"message_id", payload_of(*m).at("message_id")}, {"status", "accepted"}}, channel);
  // Both are confirmed to Telegram: nothing is asked for again.
  ASSERT_TRUE(wait_until([&] { return api.state()["pending"].as_object()[std::to_string(bot_id)] == 0; }, 10s));
  EXPECT_FALSE(dp->next_push("chat.message", channel, 300ms));

  auto events = http_get(server.port(), "/connectors/telegram/events?limit=1000", server.key()).json();
  std::size_t refused = 0;
  for (const auto& e : events.at("events").as_array())
    if (e.at("event_type") == "error" && e.at("payload").at("code") == "invalid_message") ++refused;
  EXPECT_EQ(refused, 1u) << json::serialize(events);
  auto metrics = http_get(server.port(), "/metrics", server.key()).body;
  EXPECT_NE(metrics.find("xconn_plugin_events_total{plugin=\"telegram\",name=\"updates_refused\"} 1"), std::string::npos);
  auto health = http_get(server.port(), "/connectors/telegram/health", server.key()).body;
  EXPECT_NE(health.find("healthy"), std::string::npos) << health;
  // The refusal is logged with the update and the field, never the text.
  EXPECT_NE(logs.text().find("was refused by the host and is skipped (text:"), std::string::npos) << logs.text();
  EXPECT_EQ(logs.text().find("planted-refused-text"), std::string::npos);
}

TEST_F(telegram, an_update_id_of_int64_max_neither_overflows_the_offset_nor_stops_or_spins_the_poller) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  constexpr long long top = std::numeric_limits<long long>::max();
  const std::string bot = std::to_string(bot_id);
  auto penultimate = telegram_text(group_id, "supergroup", 51, 555, "Bo", "update INT64_MAX - 1");
  api.add_raw_update(token, {{"update_id", top - 1}, {"message", penultimate}});
  api.add_raw_update(token, {{"update_id", top}, {"message", telegram_text(group_id, "supergroup", 52, 555, "Bo", "update INT64_MAX")}});
  std::set<std::string> seen;
  auto texts = read_texts(*dp, channel, 2, seen, 10s);
  ASSERT_EQ(texts, (std::vector<std::string>{"update INT64_MAX - 1", "update INT64_MAX"}));

  // Telegram would keep sending INT64_MAX (no offset confirms it): the poller goes on asking from INT64_MAX, about
  // once a second rather than as fast as the answers come, and delivers nothing twice.
  auto calls = [&] { return api.state()["polls"].as_object()[bot].at("calls").to_number<long long>(); };
  auto before = calls();
  auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return calls() >= before + 3; }, 15s));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1500ms);
  EXPECT_FALSE(dp->next_push("chat.message", channel, 300ms));
  auto offsets = api.state()["polls"].as_object()[bot].at("offsets").as_array();
  ASSERT_FALSE(offsets.empty());
  for (std::size_t i = 1; i < offsets.size(); ++i)
    EXPECT_LE(offsets[i - 1].to_number<long long>(), offsets[i].to_number<long long>()) << json::serialize(offsets);
  EXPECT_EQ(offsets.back().to_number<long long>(), top) << json::serialize(offsets);
  auto health = http_get(server.port(), "/connectors/telegram/health", server.key()).body;
  EXPECT_NE(health.find("healthy"), std::string::npos) << health;
}

}  // namespace
}  // namespace xconn::test
