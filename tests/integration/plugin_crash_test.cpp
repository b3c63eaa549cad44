// A plugin build that kills xconnd in its start (SIGSEGV, abort) must not crash it again at every start: the next start
// names it, refuses that build and serves the other plugins; deleting the record lets the build try again.
#include "core/plugin_host/plugin_library.hpp"

#include "support/daemon_process.hpp"
#include "support/sanitizers.hpp"
#include "support/server_fixture.hpp"
#include "support/test_support.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string crash_key = "xck_crash_test_key_0123456789abcdef";

// The refusal reason of crasher in GET /connectors and whether echo and crasher serve.
struct crash_listing {
  std::string crasher_refused;
  bool echo_serves = false;
  bool crasher_serves = false;
};

crash_listing crash_list(unsigned short port) {
  crash_listing out;
  auto body = http_get(port, "/connectors", crash_key).json();
  if (!body.is_object()) return out;
  for (const auto& c : body.at("connectors").as_array()) {
    out.echo_serves |= c.at("plugin_id") == json::value("echo");
    out.crasher_serves |= c.at("plugin_id") == json::value("crasher");
  }
  for (const auto& r : body.at("refused").as_array())
    if (r.at("plugin_id") == json::value("crasher")) out.crasher_refused = std::string(r.at("reason").as_string());
  return out;
}

TEST(plugin_crash, a_build_that_crashed_the_daemon_in_start_is_refused_at_the_next_start) {
  temp_dir dir;
  auto plugins = echo_alone_in(dir.path());
  std::filesystem::copy_file(fixture_plugin_dir() / "crasher.so", plugins / "crasher.so");
  write_file(dir.path() / "xconnd.yaml", test_daemon_config(plugins));
  const std::map<std::string, std::string> crashing{{"XCONN_TEST_KEY", crash_key},
                                                    {"XCONN_TEST_CRASH_IN_START", "segv"}};
  auto cache = dir.path() / "var" / "xconn" / "plugin-cache";

  {
    daemon_process first({"--config", "xconnd.yaml"}, dir.path(), crashing);
    const int code = first.wait_exit(30s);
    // ASan catches the SEGV itself: it reports and aborts or exits 1, as ASAN_OPTIONS say.
    if (under_address_sanitizer) {
      EXPECT_TRUE(code == 128 + SIGABRT || code == 1) << code << first.console();
    } else {
      EXPECT_EQ(code, 128 + SIGSEGV) << first.console();
    }
  }
  auto sha = file_sha256(plugins / "crasher.so");
  ASSERT_TRUE(sha);
  EXPECT_TRUE(std::filesystem::exists(cache / ("starting-" + *sha))) << "the start left its marker";

  // The same build, still crashing when started: the daemon comes up without starting it.
  {
    daemon_process second({"--config", "xconnd.yaml"}, dir.path(), crashing);
    auto port = second.wait_listening(30s);
    ASSERT_NE(port, 0) << second.console();
    auto l = crash_list(port);
    EXPECT_TRUE(l.echo_serves);
    EXPECT_FALSE(l.crasher_serves);
    EXPECT_NE(l.crasher_refused.find("crashed the daemon during its start"), std::string::npos) << l.crasher_refused;
    EXPECT_NE(l.crasher_refused.find(*sha), std::string::npos) << l.crasher_refused;
    auto console = second.console();
    // One line names the plugin, its file, what happened and how to clear it.
    auto line_at = console.find("plugin crasher (file " + (plugins / "crasher.so").string());
    ASSERT_NE(line_at, std::string::npos) << console;
    auto line = console.substr(line_at, console.find('\n', line_at) - line_at);
    EXPECT_NE(line.find("crashed the daemon during its start last time"), std::string::npos) << line;
    EXPECT_NE(line.find("delete " + (cache / ("crashed-" + *sha)).string()), std::string::npos) << line;
    EXPECT_NE(console.find("plugin crasher.so refused: this build"), std::string::npos) << console;
    EXPECT_EQ(http_get(port, "/connectors/echo/health", crash_key).status, 200);
    auto ws = ws_client::connect(port, "/connectors/echo/ws", {crash_key, "xagent.connector.packet.v1"});
    ASSERT_TRUE(ws);
    EXPECT_TRUE(ws->hello());
    second.signal(SIGTERM);
    EXPECT_EQ(second.wait_exit(30s), 0) << second.console();
  }

  // The record deleted (the build fixed in its environment): the same file is tried again, and serves.
  ASSERT_TRUE(std::filesystem::remove(cache / ("crashed-" + *sha)));
  daemon_process third({"--config", "xconnd.yaml"}, dir.path(), {{"XCONN_TEST_KEY", crash_key}});
  auto port = third.wait_listening(30s);
  ASSERT_NE(port, 0) << third.console();
  auto l = crash_list(port);
  EXPECT_TRUE(l.crasher_serves) << l.crasher_refused;
  EXPECT_TRUE(l.echo_serves);
  EXPECT_FALSE(std::filesystem::exists(cache / ("starting-" + *sha))) << "a start that returned leaves no marker";
  third.signal(SIGTERM);
  EXPECT_EQ(third.wait_exit(30s), 0) << third.console();

  // An abort in start is remembered the same way.
  {
    daemon_process fourth({"--config", "xconnd.yaml"}, dir.path(),
                          {{"XCONN_TEST_KEY", crash_key}, {"XCONN_TEST_CRASH_IN_START", "abort"}});
    EXPECT_EQ(fourth.wait_exit(30s), 128 + SIGABRT) << fourth.console();
  }
  daemon_process fifth({"--config", "xconnd.yaml"}, dir.path(),
                       {{"XCONN_TEST_KEY", crash_key}, {"XCONN_TEST_CRASH_IN_START", "abort"}});
  port = fifth.wait_listening(30s);
  ASSERT_NE(port, 0) << fifth.console();
  l = crash_list(port);
  EXPECT_TRUE(l.echo_serves);
  EXPECT_NE(l.crasher_refused.find("crashed the daemon during its start"), std::string::npos) << l.crasher_refused;
  fifth.signal(SIGTERM);
  EXPECT_EQ(fifth.wait_exit(30s), 0) << fifth.console();
}

}  // namespace
}  // namespace xconn::test
