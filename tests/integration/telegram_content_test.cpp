// What the telegram plugin carries besides text, on the real server against the fake Bot API on loopback:
// - a file sent with telegram_message_send_media goes out with its stored name and type (report.pdf,
//   application/pdf; the tool names only a file_ref, the host tells the rest: ABI 1.7 xconn_host_file_info), a
//   type no first bytes tell (CSV) too, and a final's file with its stored name and type;
// - messages with nothing to forward as text or a file (a sticker, a location, a venue, a poll, a contact, dice)
//   arrive as short descriptions, and a chat's own events (someone joined) as context of the next message;
// - the card's form fields have placeholders and help, the card has ui.login_flow, and the skill, the tool and
//   the host's text from chat (max_length 4096 in utf16_units) say one length, Telegram's own.
#include "support/data_plane.hpp"
#include "support/fake_telegram.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <map>

namespace xconn::test {
namespace telegram_content_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string token = "515151:AAH-planted-content-token-3e9f";
constexpr long long bot_id = 515151;
constexpr long long group_id = -1005151515151;

class telegram_content : public ::testing::Test {
 protected:
  telegram_content()
      : server({"telegram.so"}, [this](config& c) {
          c.connectors["telegram"].config = {{"api_base_url", api.base_url()}, {"poll_timeout_s", 1}};
        }) {
    api.add_bot(token, bot_id, "content_bot");
    api.add_chat(group_id, "supergroup", "Content room");
  }
  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "telegram");
    ASSERT_TRUE(dp);
    channel = dp->open_signed_in("telegram_bot_binding", {{"bot_token", token}, {"chat_id", std::to_string(group_id)}});
    ASSERT_FALSE(channel.empty());
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  std::vector<json::object> sent(const std::string& method) {
    std::vector<json::object> out;
    auto state = api.state();
    for (const auto& s : state["sent"].as_array())
      if (text_of(s.as_object(), "method") == method) out.push_back(s.as_object());
    return out;
  }
  std::string upload(const std::string& bytes, const std::string& name, const std::string& type) {
    auto r = http_call(server.port(), "POST", "/connectors/telegram/files/uploads",
                       {{"Authorization", "Bearer " + server.key()}, {"X-XAgent-Connector-Channel-ID", channel},
                        {"Content-Type", multipart_type()}},
                       multipart({file_part(bytes, name, type)}));
    EXPECT_EQ(r.status, 201) << r.body;
    return json::value_to<std::string>(r.json().at("file_ref"));
  }
  // A message of the group from Bo, with content instead of text.
  json::object message(long long id, const char* kind, json::value content) {
    auto m = telegram_text(group_id, "supergroup", id, 555, "Bo", "");
    m.erase("text");
    m[kind] = std::move(content);
    return m;
  }

  fake_telegram api;
  server_fixture server;
  std::unique_ptr<dp_client> dp;
  std::string channel;
};

TEST_F(telegram_content, the_media_tool_sends_a_pdf_with_its_stored_name_and_type_as_a_final_does) {
  const std::string pdf = "%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n";
  auto ref = upload(pdf, "report.pdf", "application/pdf");
  auto tool = dp->invoke(channel, "telegram_message_send_media", {{"file_ref", ref}, {"caption", "the report"}});
  ASSERT_TRUE(tool);
  ASSERT_EQ(error_code(*tool), "") << json::serialize(*tool);
  EXPECT_EQ(text_of(payload_of(*tool)["result"].as_object(), "media_type"), "file");
  auto docs = sent("sendDocument");
  ASSERT_EQ(docs.size(), 1u);
  const auto& part = docs[0].at("document").as_object();
  EXPECT_EQ(text_of(part, "type"), "application/pdf") << json::serialize(part);
  EXPECT_EQ(text_of(part, "filename"), "report.pdf") << json::serialize(part);
  EXPECT_EQ(part.at("bytes").to_number<std::size_t>(), pdf.size());
  EXPECT_EQ(text_of(docs[0], "caption"), "the report");

  // Bytes that say nothing of their type: the stored name and type still go (before, "file" and octet-stream).
  auto csv = upload("name,amount\nBo,3\n", "totals.csv", "text/csv");
  tool = dp->invoke(channel, "telegram_message_send_media", {{"file_ref", csv}});
  ASSERT_TRUE(tool);
  ASSERT_EQ(error_code(*tool), "") << json::serialize(*tool);
  docs = sent("sendDocument");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(text_of(docs[1].at("document").as_object(), "filename"), "totals.csv");
  EXPECT_EQ(text_of(docs[1].at("document").as_object(), "type"), "text/csv");

  auto ack = dp->request("chat.message",
                         {{"message_id", "with-report"}, {"text", "here it is"},
                          {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                         channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  docs = sent("sendDocument");
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(text_of(docs[2].at("document").as_object(), "filename"), "report.pdf");
  EXPECT_EQ(text_of(docs[2].at("document").as_object(), "type"), "application/pdf");
}

TEST_F(telegram_content, messages_with_nothing_to_forward_arrive_described_and_a_join_as_context) {
  api.add_update(token, message(61, "sticker", {{"file_id", "st-1"}, {"emoji", "\xF0\x9F\x98\x80"}, {"type", "regular"}}));
  api.add_update(token, message(62, "location", {{"latitude", 48.858844}, {"longitude", 2.294351}}));
  auto venue = message(63, "venue", {{"location", {{"latitude", 48.85}, {"longitude", 2.35}}},
                                    {"title", "Louvre"}, {"address", "Rue de Rivoli"}});
  venue["location"] = {{"latitude", 48.85}, {"longitude", 2.35}};
  api.add_update(token, venue);
  api.add_update(token, message(64, "poll", {{"id", "p1"}, {"question", "Lunch?"},
                                             {"options", json::array{json::object{{"text", "pizza"}, {"voter_count", 0}},
                                                                     json::object{{"text", "sushi"}, {"voter_count", 0}}}}}));
  api.add_update(token, message(65, "contact", {{"phone_number", "+33100000000"}, {"first_name", "Ann"},
                                                {"last_name", "Lee"}}));
  api.add_update(token, message(66, "dice", {{"emoji", "\xF0\x9F\x8E\xB2"}, {"value", 4}}));
  api.add_update(token, message(67, "new_chat_members",
                                json::array{json::object{{"id", 777}, {"is_bot", false}, {"first_name", "Cy"}}}));
  api.add_update(token, telegram_text(group_id, "supergroup", 68, 777, "Cy", "hello all"));

  std::vector<json::object> got;
  while (got.size() < 7) {
    auto m = dp->next_push("chat.message", channel, 10s);
    ASSERT_TRUE(m) << "only " << got.size() << " of 7 arrived";
    got.push_back(payload_of(*m));
    dp->send("chat.message.ack", {{"message_id", got.back().at("message_id")}, {"status", "accepted"}}, channel);
  }
  std::vector<std::string> texts;
  for (const auto& p : got) texts.push_back(text_of(p, "text"));
  auto last = texts.back();
  texts.pop_back();
  EXPECT_EQ(texts, (std::vector<std::string>{"[sticker \xF0\x9F\x98\x80]", "[location 48.858844, 2.294351]",
                                             "[venue: Louvre, Rue de Rivoli]", "[poll: Lunch? (pizza / sushi)]",
                                             "[contact: Ann Lee]", "[dice \xF0\x9F\x8E\xB2 4]"}));
  // The join is no turn of its own: it rides as context of the next message (the host writes it into the text).
  EXPECT_TRUE(last.ends_with("hello all")) << last;
  EXPECT_NE(last.find("[joined: Cy]"), std::string::npos) << last;
  // Nothing was left behind at Telegram.
  EXPECT_TRUE(wait_until([&] { return api.state()["pending"].as_object()[std::to_string(bot_id)] == 0; }, 10s));
}

TEST_F(telegram_content, the_card_has_field_help_and_a_login_flow_and_every_text_says_one_length) {
  auto card = http_get(server.port(), "/connectors/telegram/connector-card.json").json().as_object();
  const auto& flow = card.at("auth_flows").as_array().at(0).as_object();
  for (const auto& f : flow.at("fields").as_array()) {
    const auto& field = f.as_object();
    EXPECT_FALSE(text_of(field, "placeholder").empty()) << json::serialize(field);
    EXPECT_FALSE(text_of(field, "help_text").empty()) << json::serialize(field);
  }
  EXPECT_NE(text_of(flow.at("fields").as_array().at(0).as_object(), "help_text").find("BotFather"), std::string::npos);
  ASSERT_TRUE(card.contains("ui")) << json::serialize(card);
  const auto& login = card.at("ui").at("login_flow").as_object();
  EXPECT_EQ(text_of(login, "flow_id"), "telegram_bot_binding");
  const auto& steps = login.at("steps").as_array();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(text_of(steps[0].as_object(), "request_type"), "auth.start");
  EXPECT_EQ(text_of(steps[0].as_object(), "response_type"), "auth.start.ack");

  // The host's line from chat (4096 UTF-16 units, Telegram's own limit) and the plugin's own text name one number.
  auto skill = http_get(server.port(), "/connectors/telegram/skill.md").body;
  EXPECT_NE(skill.find("at most 4096 UTF-16 code units"), std::string::npos) << skill;
  EXPECT_NE(skill.find("4,096 UTF-16 code units"), std::string::npos) << skill;
  EXPECT_EQ(skill.find("4,000"), std::string::npos) << skill;
  EXPECT_EQ(skill.find("4000"), std::string::npos) << skill;
  const std::string emoji = "\xF0\x9F\x98\x80";  // two UTF-16 units
  std::string over;
  for (int i = 0; i < 2049; ++i) over += emoji;  // 2,049 characters, 4,098 units
  auto tool = dp->invoke(channel, "telegram_message_send", {{"text", over}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "message_too_long");
  auto* error = tool->if_contains("error");
  ASSERT_TRUE(error && error->is_object());
  EXPECT_NE(text_of(error->as_object(), "message").find("4,096"), std::string::npos) << json::serialize(*tool);
  EXPECT_TRUE(sent("sendMessage").empty());
  // Telegram's whole limit is taken (before, the tool refused past 4,000 characters).
  tool = dp->invoke(channel, "telegram_message_send", {{"text", std::string(4096, 'a')}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(error_code(*tool), "") << json::serialize(*tool);
  ASSERT_EQ(sent("sendMessage").size(), 1u);

  // A long final is split where the skill says: no message past 4,096 units, and parts as long as Telegram takes.
  std::string long_text;
  for (int i = 0; long_text.size() < 9000; ++i) long_text += "word" + std::to_string(i) + " ";
  auto ack = dp->request("chat.message", {{"message_id", "long-1"}, {"text", long_text}}, channel, 15s);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  auto parts = sent("sendMessage");
  ASSERT_EQ(parts.size(), 4u);
  std::string rejoined;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    EXPECT_LE(text_of(parts[i], "text").size(), 4096u);
    rejoined += text_of(parts[i], "text");
  }
  EXPECT_GT(text_of(parts[1], "text").size(), 4000u);
  EXPECT_EQ(rejoined, long_text);
}

}  // namespace telegram_content_cases
}  // namespace xconn::test
