#include "core/base/log.hpp"

#include "core/base/config.hpp"
#include "core/base/thread_name.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
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

// log::configure and log::reopen: the formats, the file, rotation. Each test leaves the log as init() makes it.
class LogConfigure : public ::testing::Test {
 protected:
  void TearDown() override { log::init(); }

  static std::string configure(const std::string& format, const std::string& file, const std::string& level = "info") {
    log_config c;
    c.format = format;
    c.file = file;
    c.level = level;
    return log::configure(c);
  }
  static std::vector<std::string> lines_of(const std::filesystem::path& path) {
    std::vector<std::string> out;
    std::istringstream in(test::read_file(path));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  static boost::json::object json_line(const std::string& line) {
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);  // also proves the line is valid UTF-8
    EXPECT_FALSE(ec) << ec.message() << ": " << line;
    EXPECT_TRUE(v.is_object()) << line;
    return v.is_object() ? v.as_object() : boost::json::object{};
  }
  static std::string this_thread_name() {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    return name;
  }

  test::temp_dir dir_;
  std::filesystem::path file_ = dir_.path() / "xconnd.log";
};

TEST_F(LogConfigure, JsonLinesCarryTheFields) {
  ASSERT_EQ(configure("json", file_.string()), "");
  spdlog::info("json probe {}", 7);
  spdlog::debug("below the level");
  spdlog::warn("a warning");
  std::thread([] {
    name_this_thread("xconn-io-3");
    spdlog::error("from an I/O thread");
  }).join();
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 3u) << test::read_file(file_);
  static const std::regex ts(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$)");
  const char* levels[] = {"info", "warn", "error"};
  const char* msgs[] = {"json probe 7", "a warning", "from an I/O thread"};
  for (std::size_t i = 0; i < l.size(); ++i) {
    auto o = json_line(l[i]);
    EXPECT_EQ(o.size(), 4u) << l[i];
    ASSERT_TRUE(o.contains("ts") && o.at("ts").is_string()) << l[i];
    EXPECT_TRUE(std::regex_match(std::string(o.at("ts").as_string()), ts)) << l[i];
    EXPECT_EQ(o.at("level"), levels[i]) << l[i];
    EXPECT_EQ(o.at("msg"), msgs[i]) << l[i];
    ASSERT_TRUE(o.contains("thread") && o.at("thread").is_string()) << l[i];
  }
  EXPECT_TRUE(l[0].starts_with(R"({"ts":")")) << l[0];  // the documented order: ts, level, thread, msg
  EXPECT_EQ(json_line(l[2]).at("thread"), "xconn-io-3");
  auto main_name = this_thread_name();
  if (!main_name.empty()) {
    EXPECT_EQ(json_line(l[0]).at("thread"), main_name.c_str());
  }
}

TEST_F(LogConfigure, LevelsFollowTheConfiguration) {
  ASSERT_EQ(configure("json", file_.string(), "warn"), "");
  spdlog::info("dropped");
  spdlog::warn("kept warn");
  spdlog::error("kept error");
  spdlog::critical("kept critical");
  ASSERT_EQ(configure("json", file_.string(), "trace"), "");
  spdlog::trace("kept trace");
  spdlog::debug("kept debug");
  ASSERT_EQ(configure("json", file_.string(), "error"), "");
  spdlog::warn("dropped too");
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 5u) << test::read_file(file_);
  const char* levels[] = {"warn", "error", "critical", "trace", "debug"};
  for (std::size_t i = 0; i < l.size(); ++i) EXPECT_EQ(json_line(l[i]).at("level"), levels[i]) << l[i];
}

TEST_F(LogConfigure, TextToAFileUsesTheHostPattern) {
  ASSERT_EQ(configure("text", file_.string(), "debug"), "");
  spdlog::debug("text probe {}", "one");
  spdlog::warn("text probe two");
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 2u) << test::read_file(file_);
  static const std::regex debug_line(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z debug text probe one$)");
  static const std::regex warn_line(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z warning text probe two$)");
  EXPECT_TRUE(std::regex_match(l[0], debug_line)) << l[0];
  EXPECT_TRUE(std::regex_match(l[1], warn_line)) << l[1];
}

// Quotes, backslashes, every kind of control character, NUL, and invalid UTF-8 (a stray byte, an overlong form,
// a cut sequence, a surrogate) beside valid multi-byte characters.
const std::string hostile_message = std::string("q\"b\\s/ nl\n cr\r tab\t bel\x07 esc\x1b[31m del\x7f nul") + '\0' +
                                    " ff\xff overlong\xc0\xaf trunc\xe2\x82 sur\xed\xa0\x80 ok\xc3\xa9\xf0\x9f\x98\x80 end";

TEST_F(LogConfigure, JsonEscapesHostileBytes) {
  ASSERT_EQ(configure("json", file_.string()), "");
  spdlog::info("{}", hostile_message);
  spdlog::info("{}", std::string(1, '\0'));
  spdlog::info("{}", "\xf4\x90\x80\x80 \xf8\x88\x80\x80\x80 \xc3");  // past U+10FFFF, a 5-byte form, cut at the end
  std::string raw = test::read_file(file_);
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 3u) << raw;  // each message one line, whatever newlines it holds
  for (const auto& line : l)
    for (char c : line) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "a raw control byte in " << line;
  const std::string fffd = "\xef\xbf\xbd";
  std::string want = std::string("q\"b\\s/ nl\n cr\r tab\t bel\x07 esc\x1b[31m del\x7f nul") + '\0' + " ff" + fffd +
                     " overlong" + fffd + fffd + " trunc" + fffd + fffd + " sur" + fffd + fffd + fffd +
                     " ok\xc3\xa9\xf0\x9f\x98\x80 end";
  EXPECT_EQ(json_line(l[0]).at("msg").as_string(), want);
  EXPECT_EQ(json_line(l[1]).at("msg").as_string(), std::string(1, '\0'));
  EXPECT_EQ(json_line(l[2]).at("msg").as_string(), fffd + fffd + fffd + fffd + " " + fffd + fffd + fffd + fffd + fffd + " " + fffd);
  EXPECT_NE(l[0].find(R"(q\"b\\s/ nl\n cr\r tab\t bel\u0007 esc\u001b[31m del\u007f nul\u0000 ff\ufffd)"), std::string::npos)
      << l[0];
}

TEST_F(LogConfigure, TextShowsHostileBytesEscapedOnOneLine) {
  ASSERT_EQ(configure("text", file_.string()), "");
  spdlog::info("{}", hostile_message);
  spdlog::info("forged\n2026-01-01T00:00:00.000Z error not from the host");
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 2u) << test::read_file(file_);
  EXPECT_TRUE(l[0].ends_with(
      R"( info q"b\s/ nl\n cr\r tab\t bel\x07 esc\x1b[31m del\x7f nul\x00 ff\xff overlong\xc0\xaf trunc\xe2\x82 sur\xed\xa0\x80 ok)"
      "\xc3\xa9\xf0\x9f\x98\x80 end"))
      << l[0];
  EXPECT_TRUE(l[1].ends_with(R"( info forged\n2026-01-01T00:00:00.000Z error not from the host)")) << l[1];
}

TEST_F(LogConfigure, APlantedSecretReachesNeitherFormat) {
  // Quote and backslash inside: redaction happens before escaping, so neither the raw nor an escaped form is left.
  const std::string secret = "pl4nted\"q\\uote-SECRET-0042";
  log::add_secret(secret);
  log::add_secret("thr-SEC-9988");
  for (const char* format : {"text", "json"}) {
    SCOPED_TRACE(format);
    auto path = dir_.path() / (std::string("planted-") + format + ".log");
    ASSERT_EQ(configure(format, path.string(), "trace"), "");
    spdlog::trace("token {} in an argument", secret);
    spdlog::error("a secret inside a word: x" + secret + "y");
    spdlog::warn("{}\n{}", secret, secret);
    std::thread([] {
      name_this_thread("thr-SEC-9988");
      spdlog::info("from a thread whose name is a secret");
    }).join();
    std::string all = test::read_file(path);
    EXPECT_EQ(all.find(secret), std::string::npos) << all;
    EXPECT_EQ(all.find("pl4nted"), std::string::npos) << all;
    EXPECT_EQ(all.find("SECRET-0042"), std::string::npos) << all;
    EXPECT_EQ(all.find("thr-SEC-9988"), std::string::npos) << all;
    auto l = lines_of(path);
    ASSERT_EQ(l.size(), 4u) << all;
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NE(l[i].find("[redacted]"), std::string::npos) << l[i];
    if (std::string(format) == "json") {
      EXPECT_EQ(json_line(l[0]).at("msg"), "token [redacted] in an argument");
      EXPECT_EQ(json_line(l[2]).at("msg"), "[redacted]\n[redacted]");
      EXPECT_EQ(json_line(l[3]).at("thread"), "[redacted]");
    } else {
      EXPECT_TRUE(l[2].ends_with(R"( warning [redacted]\n[redacted])")) << l[2];
    }
  }
}

TEST_F(LogConfigure, TheFileIsAppendedToAndCreated0640) {
  auto old_mask = ::umask(022);
  ASSERT_EQ(configure("text", file_.string()), "");
  ::umask(old_mask);
  struct stat st {};
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  spdlog::info("first");
  ASSERT_EQ(configure("json", file_.string()), "");  // the same file again: appended to, not truncated
  spdlog::info("second");
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 2u) << test::read_file(file_);
  EXPECT_TRUE(l[0].ends_with(" info first")) << l[0];
  EXPECT_EQ(json_line(l[1]).at("msg"), "second");
  // An existing file keeps its mode (logrotate's `create` sets it).
  ASSERT_EQ(::chmod(file_.c_str(), 0600), 0);
  ASSERT_EQ(configure("text", file_.string()), "");
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(LogConfigure, AFileThatCannotBeOpenedIsAClearErrorAndChangesNothing) {
  ASSERT_EQ(configure("text", file_.string()), "");
  auto missing = dir_.path() / "no-such-folder" / "xconnd.log";
  auto err = configure("json", missing.string());
  EXPECT_NE(err.find("log.file"), std::string::npos) << err;
  EXPECT_NE(err.find(missing.string()), std::string::npos) << err;
  EXPECT_NE(err.find("No such file or directory"), std::string::npos) << err;
  EXPECT_NE(err.find("folder must exist"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(missing.parent_path()));  // no folder is made
  err = configure("text", dir_.str());
  EXPECT_NE(err.find("log.file"), std::string::npos) << err;
  EXPECT_NE(err.find("Is a directory"), std::string::npos) << err;
  EXPECT_NE(configure("xml", file_.string()).find("log.format"), std::string::npos);
  EXPECT_NE(configure("text", file_.string(), "warning").find("log.level"), std::string::npos);
  // The log is as it was: text, info, the first file.
  spdlog::info("still here");
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 1u) << test::read_file(file_);
  EXPECT_TRUE(l[0].ends_with(" info still here")) << l[0];
}

TEST_F(LogConfigure, ReopenOnStderrDoesNothing) {
  ASSERT_EQ(configure("text", ""), "");
  EXPECT_EQ(log::reopen(), "");
}

// As logrotate does it: rename the file, then signal (here: call reopen) while other threads keep logging. Every
// line lands whole, exactly once: each thread's lines up to some point in the renamed file, the rest in a new file
// at the original path.
TEST_F(LogConfigure, ReopenAfterARenameWhileOtherThreadsLog) {
  const mode_t old_mask = ::umask(022);
  ::umask(old_mask);
  for (const char* format : {"json", "text"}) {
    SCOPED_TRACE(format);
    const bool json = std::string(format) == "json";
    auto path = dir_.path() / (std::string("rotate-") + format + ".log");
    auto rotated = dir_.path() / (std::string("rotate-") + format + ".log.1");
    ASSERT_EQ(configure(format, path.string()), "");

    constexpr int writers = 4, max_lines = 200000, enough = 200;
    std::atomic<int> logged[writers] = {};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w)
      threads.emplace_back([w, &logged, &stop] {
        name_this_thread("log-writer-" + std::to_string(w));
        for (int i = 0; i < max_lines && !stop.load(); ++i) {
          spdlog::info("writer {} line {} {}", w, i, std::string(static_cast<std::size_t>(i % 97), 'x'));
          logged[w].store(i + 1);
        }
      });
    // Waits (no sleeping; bounded by max_lines) until every writer has logged `more` lines past `from`.
    auto wait_for = [&](const std::vector<int>& from, int more) {
      for (int w = 0; w < writers; ++w)
        while (logged[w].load() < std::min(from[w] + more, max_lines)) std::this_thread::yield();
    };
    wait_for(std::vector<int>(writers, 0), enough);
    spdlog::warn("before the rotation");
    std::filesystem::rename(path, rotated);
    EXPECT_EQ(log::reopen(), "");
    spdlog::warn("after the rotation");
    std::vector<int> at_reopen(writers);
    for (int w = 0; w < writers; ++w) at_reopen[w] = logged[w].load();
    wait_for(at_reopen, enough);
    stop = true;
    for (auto& t : threads) t.join();

    static const std::regex text_line(
        R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (info|warning) (writer (\d+) line (\d+) x*|before the rotation|after the rotation)$)");
    static const std::regex writer_msg(R"(^writer (\d+) line (\d+) (x*)$)");
    // Per file: each writer's line numbers, in file order, and the two markers.
    auto read = [&](const std::filesystem::path& p, std::vector<std::vector<int>>& numbers, std::set<std::string>& markers) {
      numbers.assign(writers, {});
      for (const auto& line : lines_of(p)) {
        std::string msg;
        if (json) {
          auto o = json_line(line);
          ASSERT_TRUE(o.contains("msg")) << line;
          msg = std::string(o.at("msg").as_string());
          if (msg.starts_with("writer ")) {
            std::string want = "log-writer-" + msg.substr(7, msg.find(' ', 7) - 7);
            EXPECT_EQ(o.at("thread"), want.c_str()) << line;
          }
        } else {
          std::smatch m;
          ASSERT_TRUE(std::regex_match(line, m, text_line)) << "a torn or foreign line: " << line;
          msg = m[2];
        }
        std::smatch m;
        if (std::regex_match(msg, m, writer_msg)) {
          int w = std::stoi(m[1]), i = std::stoi(m[2]);
          ASSERT_TRUE(w >= 0 && w < writers) << line;
          EXPECT_EQ(m[3].length(), i % 97) << line;
          numbers[static_cast<std::size_t>(w)].push_back(i);
        } else {
          markers.insert(msg);
        }
      }
    };
    std::vector<std::vector<int>> old_numbers, new_numbers;
    std::set<std::string> old_markers, new_markers;
    read(rotated, old_numbers, old_markers);
    read(path, new_numbers, new_markers);
    EXPECT_EQ(old_markers, std::set<std::string>{"before the rotation"});
    EXPECT_EQ(new_markers, std::set<std::string>{"after the rotation"});
    for (int w = 0; w < writers; ++w) {
      SCOPED_TRACE("writer " + std::to_string(w));
      const auto& before = old_numbers[static_cast<std::size_t>(w)];
      const auto& after = new_numbers[static_cast<std::size_t>(w)];
      EXPECT_GE(before.size(), static_cast<std::size_t>(enough));
      // Counted after reopen returned: never in the old file (one line may have been written but not yet counted).
      EXPECT_LE(static_cast<int>(before.size()), at_reopen[w] + 1);
      EXPECT_GE(after.size(), static_cast<std::size_t>(std::min(enough, max_lines - at_reopen[w])));
      // 0, 1, ... k-1 in the old file and k, ... n-1 in the new one: none lost, none twice, none out of order.
      int next = 0;
      for (int i : before) EXPECT_EQ(i, next++);
      for (int i : after) EXPECT_EQ(i, next++);
      EXPECT_EQ(next, logged[w].load());
    }
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u & ~old_mask) << std::oct << st.st_mode;  // the new file, as configure makes it
  }
}

TEST_F(LogConfigure, AReopenThatFailsKeepsTheOldFile) {
  auto sub = dir_.path() / "logs";
  std::filesystem::create_directory(sub);
  auto path = sub / "xconnd.log";
  ASSERT_EQ(configure("json", path.string()), "");
  spdlog::info("one");
  auto moved = dir_.path() / "logs-gone";
  std::filesystem::rename(sub, moved);  // the folder itself went: the path cannot be opened again
  auto err = log::reopen();
  EXPECT_NE(err.find("log.file: cannot open " + path.string()), std::string::npos) << err;
  spdlog::info("two");
  auto l = lines_of(moved / "xconnd.log");
  ASSERT_EQ(l.size(), 3u) << test::read_file(moved / "xconnd.log");
  EXPECT_EQ(json_line(l[0]).at("msg"), "one");
  EXPECT_EQ(json_line(l[1]).at("level"), "error");
  EXPECT_NE(std::string(json_line(l[1]).at("msg").as_string()).find("cannot reopen"), std::string::npos) << l[1];
  EXPECT_EQ(json_line(l[2]).at("msg"), "two");
  EXPECT_FALSE(std::filesystem::exists(path));
}

// Under systemd stderr is journald's stream (JOURNAL_STREAM names its device and inode): the text format leaves
// the time to journald and starts each line with its syslog priority. Stderr is pointed at a file here.
TEST_F(LogConfigure, UnderJournaldTextLeavesTheTimeToJournald) {
  auto capture = dir_.path() / "stderr.txt";
  int fd = ::open(capture.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  std::fflush(stderr);
  int saved = ::dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(fd, STDERR_FILENO), STDERR_FILENO);
  std::string stream = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const char* before = std::getenv("JOURNAL_STREAM");
  std::string previous = before ? before : "";

  ::setenv("JOURNAL_STREAM", stream.c_str(), 1);
  std::string e1 = configure("text", "");
  spdlog::info("journal info");
  spdlog::warn("journal warn");
  spdlog::error("journal\nerror");
  std::string e2 = configure("json", "");
  spdlog::info("journal json");
  // Inherited but not ours (stderr is something else): the full time stamp stays.
  ::setenv("JOURNAL_STREAM", (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1)).c_str(), 1);
  std::string e3 = configure("text", "");
  spdlog::info("not the journal");
  ::setenv("JOURNAL_STREAM", "garbage", 1);
  std::string e4 = configure("text", "");
  spdlog::info("garbage stream");

  log::init();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fd);
  if (before) ::setenv("JOURNAL_STREAM", previous.c_str(), 1);
  else ::unsetenv("JOURNAL_STREAM");

  EXPECT_EQ(e1 + e2 + e3 + e4, "");
  auto l = lines_of(capture);
  ASSERT_EQ(l.size(), 6u) << test::read_file(capture);
  EXPECT_EQ(l[0], "<6>info journal info");
  EXPECT_EQ(l[1], "<4>warning journal warn");
  EXPECT_EQ(l[2], R"(<3>error journal\nerror)");
  ASSERT_TRUE(l[3].starts_with("<6>{")) << l[3];
  EXPECT_EQ(json_line(l[3].substr(3)).at("msg"), "journal json");
  static const std::regex stamped(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z info (not the journal|garbage stream)$)");
  EXPECT_TRUE(std::regex_match(l[4], stamped)) << l[4];
  EXPECT_TRUE(std::regex_match(l[5], stamped)) << l[5];
}

TEST_F(LogConfigure, InitStillWritesToStderrAndTheFile) {
  log::init(spdlog::level::info, file_.string());
  log::add_secret("init-secret-JJJJ0000");
  spdlog::info("init line init-secret-JJJJ0000");
  auto l = lines_of(file_);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_TRUE(l[0].ends_with(" info init line [redacted]")) << l[0];
  EXPECT_THROW(log::init(spdlog::level::info, (dir_.path() / "none" / "x.log").string()), std::runtime_error);
}

}  // namespace
}  // namespace xconn
