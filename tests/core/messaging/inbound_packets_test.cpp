// message.push (IM v1 §5): the reply tool and the skill it names, and a complete text for a message with files and
// no text of its own.
#include "core/messaging/inbound_packets.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace xconn {
namespace {
namespace json = boost::json;

inbound_wire v1_wire() {
  inbound_wire wire;
  wire.channel_id = "cch_a";
  wire.provider = "telegram";
  wire.label = "Telegram";
  wire.skill = "connector-im-telegram";
  wire.v1_tools = {"telegram_send", "telegram_status"};
  wire.reply_tool = "telegram_send";
  return wire;
}

json::object payload(const std::string& packet) { return json::parse(packet).as_object().at("payload").as_object(); }

TEST(MessagePush, NamesTheReplyToolAndTheSkill) {
  inbound_message m;
  m.message_id = "msg_1";
  m.text = "hello";
  m.sender_id = "u1";
  m.sender_name = "Alice";
  m.channel_key = "telegram/p2p/42";
  auto p = payload(message_push_packet(v1_wire(), m, {}));
  EXPECT_EQ(p["reply"], (json::object{{"required", true}, {"tool_id", "telegram_send"}}));
  EXPECT_EQ(p["skill"], (json::object{{"name", "connector-im-telegram"},
                                      {"tool_ids", json::array{"telegram_send", "telegram_status"}}}));
  EXPECT_EQ(p["text"], "hello");
  EXPECT_EQ(p["chat_type"], "p2p");
  m.trigger = false;  // context: no reply is due for it
  EXPECT_EQ(payload(message_push_packet(v1_wire(), m, {}))["reply"].at("required"), false);
  auto bare = v1_wire();
  bare.reply_tool.clear();
  EXPECT_FALSE(payload(message_push_packet(bare, m, {})).contains("reply"));
}

TEST(MessagePush, AMessageWithoutTextIsDescribed) {
  inbound_message m;
  m.message_id = "msg_2";
  m.sender_id = "u9";
  m.channel_key = "telegram/group/7";
  m.files = json::array{json::object{{"file_ref", "f1"}, {"type", "image"}, {"filename", "cat.png"}}};
  auto p = payload(message_push_packet(v1_wire(), m, {}));
  EXPECT_EQ(p["raw_text"], "");
  EXPECT_EQ(p["message_type"], "image");
  EXPECT_EQ(p["text"], "User message from Telegram:\nSender: u9\nConversation type: group\nMessage type: image\n"
                       "User text: none\nFile: cat.png");
}

}  // namespace
}  // namespace xconn
