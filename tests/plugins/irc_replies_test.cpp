// What the irc session reads from a server's replies (plugins/irc/irc_replies.hpp), tested on the lines as ngircd
// and IRCv3 servers send them: the registration's verdict, the CAP answer, JOIN refusals, NAMES and server-time.
#include "plugins/irc/irc_replies.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace irc_replies_cases {
using namespace irc;

line parsed(const std::string& text) { return parse_line(text).value(); }

TEST(IrcReplies, RegistrationVerdictsNameTheirCodeAndOnlyAPasswordErrorIsACredentialMatter) {
  EXPECT_EQ(registration_verdict(parsed(":irc.test 001 xbot :Welcome")), "");
  EXPECT_EQ(registration_verdict(parsed(":irc.test 464 * :Password incorrect")), "invalid_credentials");
  EXPECT_EQ(registration_verdict(parsed("ERROR :Access denied: Bad PASSWORD?")), "invalid_credentials");
  EXPECT_EQ(registration_verdict(parsed("ERROR :Closing link: server shutting down")), "target_unreachable");
  EXPECT_EQ(registration_verdict(parsed("ERROR")), "target_unreachable");
  EXPECT_EQ(registration_verdict(parsed(":irc.test 433 * xbot :Nickname already in use")), "nick_in_use");
  EXPECT_EQ(registration_verdict(parsed(":irc.test 432 * 1bad :Erroneous nickname")), "invalid_input");
  EXPECT_FALSE(registration_verdict(parsed(":irc.test NOTICE * :Looking up your hostname")));
}

TEST(IrcReplies, CapAnswersRequestTheWantedCapsOnceTheOfferEnded) {
  std::vector<std::string> offered;
  EXPECT_FALSE(cap_answer(parsed(":irc.test CAP * LS * :multi-prefix server-time=x"), offered)) << "the offer goes on";
  auto answer = cap_answer(parsed(":irc.test CAP * LS :account-tag away-notify message-tags"), offered);
  ASSERT_TRUE(answer);
  EXPECT_EQ(*answer, "CAP REQ :message-tags account-tag server-time\r\n");
  std::vector<std::string> none;
  EXPECT_EQ(cap_answer(parsed(":irc.test CAP * LS :multi-prefix"), none), std::string("CAP :END\r\n"));
  EXPECT_EQ(cap_answer(parsed(":irc.test CAP xbot ACK :message-tags"), none), std::string("CAP :END\r\n"));
  EXPECT_EQ(cap_answer(parsed(":irc.test CAP xbot NAK :message-tags"), none), std::string("CAP :END\r\n"));
  EXPECT_FALSE(cap_answer(parsed(":irc.test CAP xbot NEW :batch"), none));
}

TEST(IrcReplies, JoinRefusalsAndNamesRepliesAreRead) {
  EXPECT_TRUE(refuses_join(parsed(":irc.test 474 xbot #ops :Cannot join channel (+b)")));
  EXPECT_TRUE(refuses_join(parsed(":irc.test 403 xbot #nowhere :No such channel")));
  EXPECT_FALSE(refuses_join(parsed(":xbot!x@h JOIN #ops")));
  auto names = names_reply(parsed(":irc.test 353 xbot = #ops :@ann +bo ~&%xbot  carl"));
  ASSERT_TRUE(names);
  EXPECT_EQ(names->first, "#ops");
  EXPECT_EQ(names->second, (std::vector<std::string>{"ann", "bo", "xbot", "carl"}));
  EXPECT_FALSE(names_reply(parsed(":irc.test 353 xbot")));
  EXPECT_FALSE(names_reply(parsed(":irc.test 366 xbot #ops :End of NAMES list")));
}

TEST(IrcReplies, ServerTimeIsReadToTheMillisecondAndAnythingElseIsZero) {
  EXPECT_EQ(server_time_ms("2026-12-06T07:42:44.123Z"), 1796542964123LL);
  EXPECT_EQ(server_time_ms("1970-01-01T00:00:01.005Z"), 1005);
  EXPECT_EQ(server_time_ms("2026-12-06T07:42:44Z"), 0);
  EXPECT_EQ(server_time_ms("2026-12-06T07:42:44.123+01"), 0);
  EXPECT_EQ(server_time_ms(""), 0);
}

}  // namespace irc_replies_cases
