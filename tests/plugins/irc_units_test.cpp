// The irc plugin's own rules, tested directly (plugins/irc/*.hpp) and through its C ABI table: lines parsed from
// any bytes (IRCv3 tags, prefixes, trailing parameters, hostile input), finals split within 400 bytes on UTF-8
// boundaries, CTCP, the login form and the config section refused with the field named (never its value).
#include <xconn/adapter/retry_backoff.hpp>
#include "plugins/irc/irc_input.hpp"
#include "plugins/irc/irc_line.hpp"
#include "plugins/irc/irc_text.hpp"
#include "support/abi_test_host.hpp"
#include "support/test_support.hpp"

#include <boost/dll/shared_library.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace irc_units {
using namespace irc;

TEST(IrcLine, TagsPrefixCommandAndTrailingAreRead) {
  auto l = parse_line("@msgid=abc\\:1;account=ann;+draft/x;time=2026-12-06T07:42:44.123Z :ann!a@host PRIVMSG #ops :hi: there");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->tags.at("msgid"), "abc;1");
  EXPECT_EQ(l->tags.at("account"), "ann");
  EXPECT_EQ(l->tags.at("+draft/x"), "");
  EXPECT_EQ(l->source, "ann!a@host");
  EXPECT_EQ(l->nick(), "ann");
  EXPECT_EQ(l->command, "PRIVMSG");
  EXPECT_EQ(l->params, (std::vector<std::string>{"#ops", "hi: there"}));
  auto numeric = parse_line(":irc.test 353 me = #ops :@ann +bo xbot");
  ASSERT_TRUE(numeric);
  EXPECT_EQ(numeric->params.back(), "@ann +bo xbot");
  EXPECT_EQ(numeric->nick(), "irc.test");
  auto bare = parse_line("ping   :x");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->command, "PING");
  EXPECT_EQ(bare->param(0), "x");
  EXPECT_EQ(bare->param(5), "");
}

TEST(IrcLine, TagValuesUnescape) {
  EXPECT_EQ(unescape_tag_value("a\\sb\\\\c\\rd\\ne\\:f"), "a b\\c\rd\ne;f");
  EXPECT_EQ(unescape_tag_value("trailing\\"), "trailing");
  EXPECT_EQ(unescape_tag_value("\\q"), "q");
}

TEST(IrcLine, HostileLinesAreRefusedOrReadWithoutHarm) {
  EXPECT_FALSE(parse_line(""));
  EXPECT_FALSE(parse_line("@only=tags"));
  EXPECT_FALSE(parse_line(":source.only"));
  EXPECT_FALSE(parse_line(std::string("PRIVMSG #a :nul\0here", 20)));
  std::string tags = "@";
  for (int i = 0; i < 5000; ++i) tags += "k" + std::to_string(i) + "=" + std::string(3, '\\') + ";";
  auto many = parse_line(tags + " PING :x");
  ASSERT_TRUE(many);
  EXPECT_EQ(many->command, "PING");
  EXPECT_FALSE(parse_line(std::string(10000, ' ') + "X")) << "a line starts with its command";
  auto spaces = parse_line("X" + std::string(10000, ' ') + ":t");
  ASSERT_TRUE(spaces);
  EXPECT_EQ(spaces->params, std::vector<std::string>{"t"});
  std::string binary;
  for (int c = 1; c < 256; ++c) binary += static_cast<char>(c);
  EXPECT_NO_THROW(parse_line(binary));
}

TEST(IrcLine, BuiltLinesEndInCrLfWithTheLastParameterTrailing) {
  EXPECT_EQ(build_line("PRIVMSG", {"#ops", "hello there"}), "PRIVMSG #ops :hello there\r\n");
  EXPECT_EQ(build_line("NICK", {"xbot"}), "NICK :xbot\r\n");
  EXPECT_TRUE(line_safe("fine text"));
  EXPECT_FALSE(line_safe("two\r\nlines"));
  EXPECT_FALSE(line_safe(std::string("nul\0", 4)));
  EXPECT_EQ(fold("#OPS"), "#ops");
}

std::string irc_repeat(std::string_view piece, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += piece;
  return out;
}

TEST(IrcText, LinesSplitAtNewlinesWithinTheLimitOnCodePointsPreferringSpaces) {
  EXPECT_EQ(split_message("one\n\ntwo\r\nthree\n"), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_TRUE(split_message("").empty());
  EXPECT_TRUE(split_message("\n\r\n").empty());
  EXPECT_EQ(split_message(std::string("a\0b", 3)), (std::vector<std::string>{"ab"}));
  // Words: breaks at a space, which the break takes; the parts joined by a space give the line back.
  std::string words;
  for (int i = 0; words.size() < 1500; ++i) words += "word" + std::to_string(i) + " ";
  words += "end";
  auto parts = split_message(words);
  std::string joined;
  for (const auto& p : parts) {
    EXPECT_LE(p.size(), max_body_bytes);
    joined += (joined.empty() ? "" : " ") + p;
  }
  EXPECT_EQ(joined, words);
  // No space: cut by bytes, never inside a code point (2, 3 and 4-byte ones), and the parts rejoin exactly.
  for (const std::string& piece : {std::string("\xC3\xA9"), std::string("\xE6\x97\xA5"), std::string("\xF0\x9F\x9A\x80")}) {
    auto text = "x" + irc_repeat(piece, 700);
    auto cut = split_message(text);
    std::string back;
    for (const auto& p : cut) {
      EXPECT_LE(p.size(), max_body_bytes);
      EXPECT_NE(static_cast<unsigned char>(p.front()) & 0xC0, 0x80) << "a part starts inside a code point";
      back += p;
    }
    EXPECT_EQ(back, text);
  }
}

TEST(IrcText, CtcpActionIsTextAndOtherCtcpIsNoMessage) {
  EXPECT_EQ(message_text("\x01" "ACTION waves\x01", "ann"), "* ann waves");
  EXPECT_EQ(message_text("\x01" "ACTION\x01", "ann"), "* ann ");
  EXPECT_FALSE(message_text("\x01VERSION\x01", "ann"));
  EXPECT_FALSE(message_text("", "ann"));
  EXPECT_EQ(message_text("plain", "ann"), "plain");
}

TEST(IrcText, AnyBytesBecomeValidUtf8WithReplacements) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(to_valid_utf8("caf\xC3\xA9 \xF0\x9F\x9A\x80"), "caf\xC3\xA9 \xF0\x9F\x9A\x80");
  EXPECT_EQ(to_valid_utf8("caf\xE9"), "caf" + fffd);                       // Latin-1
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), fffd + fffd);                       // overlong '/'
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd);           // a surrogate
  EXPECT_EQ(to_valid_utf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // past U+10FFFF
  EXPECT_EQ(to_valid_utf8("\xE6\x97"), fffd + fffd);                       // cut short
  EXPECT_EQ(to_valid_utf8("a\x01" "b\tc"), "a\x01" "b\tc");
  EXPECT_EQ(to_valid_utf8("a\x01" "b\tc", true), "a" + fffd + "b" + fffd + "c");
}

std::string login_refusal(const boost::json::object& input) {
  login l;
  return read_login(input, l);
}

TEST(IrcLogin, EveryFieldIsCheckedAndARefusalNamesTheFieldNotTheValue) {
  boost::json::object good{{"server", "irc.example.net:6697"}, {"nick", "xbot"}, {"target", "#ops"},
                           {"password", "planted-secret"}, {"tls", "true"}};
  login l;
  ASSERT_EQ(read_login(good, l), "");
  EXPECT_EQ(l.host, "irc.example.net");
  EXPECT_EQ(l.port, "6697");
  EXPECT_TRUE(l.tls);
  EXPECT_EQ(l.server(), "irc.example.net:6697");
  auto with = [&](const char* field, boost::json::value v) {
    auto input = good;
    input[field] = std::move(v);
    return login_refusal(input);
  };
  EXPECT_EQ(with("server", "[::1]:6667"), "");
  EXPECT_EQ(with("target", "ann"), "");
  EXPECT_EQ(with("password", nullptr), "");
  EXPECT_EQ(with("tls", ""), "");
  for (const char* bad : {"nohost", ":6667", "host:", "host:0", "host:65536", "host:66a", "bad host:1", "a/b:1"})
    EXPECT_TRUE(with("server", bad).starts_with("server:")) << bad;
  for (const char* bad : {"", "1abc", "-x", "has space", "ni\r\nck", "toolong-toolong-toolong-toolong-x"})
    EXPECT_TRUE(with("nick", bad).starts_with("nick:")) << bad;
  for (const char* bad : {"", "#", "#a b", "#a,#b", "#bell\x07", "#ops\r\nQUIT"})
    EXPECT_TRUE(with("target", bad).starts_with("target:")) << bad;
  EXPECT_TRUE(with("password", "planted\r\nQUIT").starts_with("password:"));
  EXPECT_TRUE(with("password", boost::json::string(300, 'p')).starts_with("password:"));
  EXPECT_TRUE(with("tls", "yes").starts_with("tls:"));
  EXPECT_TRUE(with("nick", 42).starts_with("nick:"));
  EXPECT_EQ(with("password", "planted\r\nQUIT").find("planted"), std::string::npos);
}

class IrcAbi : public ::testing::Test {
 protected:
  xconn::test::plugin_config_check validate{"irc.so"};
};

TEST_F(IrcAbi, TheConfigSectionIsCheckedKeyByKey) {
  EXPECT_EQ(validate("{}"), "");
  EXPECT_EQ(validate(R"({"config":{"ca_file":"/x.pem","connect_timeout_s":5},"policy":{"lines_per_second":4}})"), "");
  EXPECT_EQ(validate(R"({"policy":{"lines_per_second":0}})"), "policy.lines_per_second: must be an integer 1..20");
  EXPECT_EQ(validate(R"({"policy":{"lines_per_second":"2"}})"), "policy.lines_per_second: must be an integer 1..20");
  EXPECT_EQ(validate(R"({"config":{"connect_timeout_s":999}})"), "config.connect_timeout_s: must be an integer 1..120");
  EXPECT_EQ(validate(R"({"config":{"password":"planted"}})"), "config.password: unknown key");
  EXPECT_EQ(validate(R"({"other":{}})"), "other: unknown group");
  EXPECT_EQ(validate(R"({"config":[]})"), "config: must be an object");
  EXPECT_EQ(validate("[1,2"), "section: must be a JSON object");
}

}  // namespace irc_units

namespace irc_units {

// The adapters' shared rule: 1 s doubling, capped at 60 s (it was 30 s); a new backoff starts at 1 s again.
TEST(IrcBackoff, ReconnectWaitsDoubleFromOneSecondAndStopAtSixty) {
  xconn::adapter::retry_backoff b;
  std::vector<long long> waits;
  for (int i = 0; i < 9; ++i) waits.push_back(b.next().count());
  EXPECT_EQ(waits, (std::vector<long long>{1, 2, 4, 8, 16, 32, 60, 60, 60}));
  b = {};
  EXPECT_EQ(b.next().count(), 1);
}

}  // namespace irc_units
