// The host's messages as PRIVMSGs and back (plugins/irc/irc_messages.hpp), on lines as ngircd and IRCv3 servers send
// them: the conversation a PRIVMSG belongs to, the account tag before the nick, a msgid past the host's bound left
// out, server-time, a CTCP ACTION and other CTCP; a final's text and files as bodies.
#include "plugins/irc/irc_messages.hpp"

#include <gtest/gtest.h>

#include <string>

namespace irc_messages_cases {
using namespace irc;
namespace json = boost::json;

json::object message_of(const std::string& text, privmsg* out = nullptr) {
  auto m = read_privmsg(parse_line(text).value());
  if (!m) return {};
  if (out) *out = *m;
  return json::parse(m->json).as_object();
}

TEST(IrcMessages, AChannelMessageBelongsToItsChannelAndCarriesTheAccountAndServerTime) {
  privmsg m;
  auto o = message_of("@account=alice;msgid=abc;time=2026-12-06T07:42:44.123Z :Al!a@h PRIVMSG #Ops :hello", &m);
  EXPECT_TRUE(m.to_channel);
  EXPECT_EQ(m.from, "#ops");
  EXPECT_EQ(o.at("text"), "hello");
  EXPECT_EQ(o.at("sender_id"), "alice");
  EXPECT_EQ(o.at("sender_name"), "Al");
  EXPECT_EQ(o.at("msg_id"), "abc");
  EXPECT_EQ(o.at("at").as_int64(), 1796542964123);  // 2026-12-06T07:42:44.123Z
  EXPECT_EQ(o.at("channel_key"), "irc/group/#Ops");
}

TEST(IrcMessages, APrivateMessageBelongsToItsSenderAndAnOversizedMsgidIsLeftOut) {
  privmsg m;
  auto o = message_of("@msgid=" + std::string(300, 'x') + " :Bob!b@h PRIVMSG xbot :hi", &m);
  EXPECT_FALSE(m.to_channel);
  EXPECT_EQ(m.from, "bob");
  EXPECT_EQ(o.at("sender_id"), "Bob");
  EXPECT_FALSE(o.contains("msg_id"));
  EXPECT_GT(o.at("at").as_int64(), 0);  // no server-time: the time it was read
  EXPECT_EQ(o.at("channel_key"), "irc/direct/Bob");
}

TEST(IrcMessages, AnActionReadsAsTextAndOtherCtcpOrOtherCommandsAreNoMessage) {
  EXPECT_EQ(message_of(":Al!a@h PRIVMSG #ops :\x01" "ACTION waves\x01").at("text"), "* Al waves");
  EXPECT_FALSE(read_privmsg(parse_line(":Al!a@h PRIVMSG #ops :\x01VERSION\x01").value()));
  EXPECT_FALSE(read_privmsg(parse_line(":Al!a@h NOTICE #ops :hello").value()));
  EXPECT_FALSE(read_privmsg(parse_line(":Al!a@h PRIVMSG #ops").value()));
}

TEST(IrcMessages, AFinalsFilesAreAnnouncedByNameWithTheirLinkAfterItsText) {
  auto reply = json::parse(R"({"text":"one\ntwo","files":[{"filename":"a.pdf","download_url":"https://x/a"},
                                {"filename":"b.png"}, 7]})").as_object();
  EXPECT_EQ(reply_bodies(reply), (std::vector<std::string>{"one", "two", "a.pdf https://x/a"}));
}

}  // namespace irc_messages_cases
