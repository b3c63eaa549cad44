#include "core/base/log.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace xconn {
namespace {

// Each test registers its own secrets (the registry is process-wide and has no reset), so they never clash.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { log::init(spdlog::level::info, file_.string()); }
  void TearDown() override { log::init(); }  // stderr only: release the file before the folder goes

  std::vector<std::string> lines() {
    spdlog::default_logger()->flush();
    std::vector<std::string> out;
    std::istringstream in(test::read_file(file_));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::string text() {
    spdlog::default_logger()->flush();
    return test::read_file(file_);
  }

  test::temp_dir dir_;
  std::filesystem::path file_ = dir_.path() / "xconn.log";
};

TEST_F(LogTest, WritesLinesToTheFile) {
  spdlog::info("hello from the log test {}", 42);
  spdlog::debug("below the level");
  auto l = lines();
  ASSERT_EQ(l.size(), 1u) << text();
  EXPECT_NE(l[0].find("hello from the log test 42"), std::string::npos) << l[0];
  EXPECT_NE(l[0].find("info"), std::string::npos) << l[0];
}

TEST_F(LogTest, LinesUseTheHostPattern) {
  spdlog::warn("pattern probe");
  auto l = lines();
  ASSERT_EQ(l.size(), 1u) << text();
  // "%Y-%m-%dT%H:%M:%S.%eZ %l %v" in UTC.
  static const std::regex pattern(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z warning pattern probe$)");
  EXPECT_TRUE(std::regex_match(l[0], pattern)) << l[0];
}

TEST_F(LogTest, SecretIsRedactedInLines) {
  log::add_secret("sk-log-secret-AAAA1111");
  spdlog::info("connecting with token sk-log-secret-AAAA1111 to the target");
  spdlog::error("failed: sk-log-secret-AAAA1111");
  auto all = text();
  EXPECT_EQ(all.find("sk-log-secret-AAAA1111"), std::string::npos) << all;
  auto l = lines();
  ASSERT_EQ(l.size(), 2u) << all;
  EXPECT_NE(l[0].find("connecting with token [redacted] to the target"), std::string::npos) << l[0];
  EXPECT_NE(l[1].find("failed: [redacted]"), std::string::npos) << l[1];
}

TEST_F(LogTest, SecretTwiceInOneLine) {
  log::add_secret("tok-BBBB2222");
  spdlog::info("a=tok-BBBB2222 b=tok-BBBB2222tok-BBBB2222 end");
  auto l = lines();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].find("tok-BBBB2222"), std::string::npos) << l[0];
  EXPECT_NE(l[0].find("a=[redacted] b=[redacted][redacted] end"), std::string::npos) << l[0];
}

TEST_F(LogTest, SecretContainingAShorterSecretIsRedactedWhole) {
  // Registered shorter first: the longer must still be replaced whole, leaving no tail of it behind.
  log::add_secret("CCCC3333");
  log::add_secret("prefix-CCCC3333-suffix");
  spdlog::info("long=prefix-CCCC3333-suffix short=CCCC3333");
  auto l = lines();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_NE(l[0].find("long=[redacted] short=[redacted]"), std::string::npos) << l[0];
  EXPECT_EQ(l[0].find("prefix"), std::string::npos) << l[0];
  EXPECT_EQ(l[0].find("suffix"), std::string::npos) << l[0];
}

TEST_F(LogTest, SecretsInFormatArgumentsAreRedacted) {
  log::add_secret("arg-secret-DDDD4444");
  std::string token = "arg-secret-DDDD4444";
  spdlog::warn("auth {} failed for {}", token, "user");
  auto all = text();
  EXPECT_EQ(all.find(token), std::string::npos) << all;
  EXPECT_NE(all.find("auth [redacted] failed for user"), std::string::npos) << all;
}

TEST(LogRedact, ReplacesEverySecret) {
  log::add_secret("redact-EEEE5555");
  log::add_secret("other-FFFF6666");
  EXPECT_EQ(log::redact("x redact-EEEE5555 y other-FFFF6666 z redact-EEEE5555"),
            "x [redacted] y [redacted] z [redacted]");
  EXPECT_EQ(log::redact("nothing here"), "nothing here");
  EXPECT_EQ(log::redact(""), "");
  EXPECT_EQ(log::redact("redact-EEEE555"), "redact-EEEE555");  // a near miss stays
}

TEST(LogRedact, AdjacentAndOverlappingOccurrences) {
  log::add_secret("abababXY");
  EXPECT_EQ(log::redact("abababXYabababXY"), "[redacted][redacted]");
  EXPECT_EQ(log::redact("abababababXY"), "abab[redacted]");
}

TEST(LogRedact, SecretsAreTrimmed) {
  log::add_secret("  trimmed-GGGG7777\t");
  EXPECT_EQ(log::redact("k=trimmed-GGGG7777;"), "k=[redacted];");
  EXPECT_EQ(log::redact("k= trimmed-GGGG7777 ;"), "k= [redacted] ;");
}

TEST(LogRedact, DuplicatesAreHarmless) {
  log::add_secret("dup-HHHH8888");
  log::add_secret("dup-HHHH8888");
  log::add_secret(" dup-HHHH8888 ");
  EXPECT_EQ(log::redact("dup-HHHH8888"), "[redacted]");
}

TEST(LogRedact, ShortSecretsAreIgnored) {
  log::add_secret("");
  log::add_secret("a");
  log::add_secret("abc");
  log::add_secret("   xyz   ");  // three bytes once trimmed
  EXPECT_EQ(log::redact("a cab abc xyz the abacus"), "a cab abc xyz the abacus");
}

TEST(LogRedact, FourByteSecretIsUsed) {
  log::add_secret("Q9z!");
  EXPECT_EQ(log::redact("pin Q9z! ok"), "pin [redacted] ok");
}

}  // namespace
}  // namespace xconn
