// The real xconnd binary: configuration errors, the generated key, secrets kept out of the log, signals.
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/test_support.hpp"
#include "support/wire_client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <memory>
#include <regex>
#include <vector>

namespace xconn::test {
namespace {
using namespace std::chrono_literals;

std::string config_text(const std::string& extra_server = "", const std::string& connectors = "") {
  return "server:\n  listen: \"127.0.0.1:0\"\n" + extra_server + "store:\n  path: \"./var/xconn\"\n" +
         "  map_size_bytes: 67108864\nplugins:\n  dir: \"" + plugin_dir().string() + "\"\n" + connectors;
}

// A plugin folder of the test's own holding echo.so, and xconnd.yaml pointing at it; `tail` ends the plugins
// section (its own keys indented) and may add sections. Returns the folder.
std::filesystem::path own_plugin_folder(const temp_dir& dir, const std::string& tail) {
  auto plugins = echo_alone_in(dir.path());
  write_file(dir.path() / "xconnd.yaml",
             "server:\n  listen: \"127.0.0.1:0\"\nstore:\n  path: \"./var/xconn\"\n  map_size_bytes: 67108864\n"
             "plugins:\n  dir: \"" + plugins.string() + "\"\n" + tail);
  return plugins;
}

TEST(daemon, generates_a_key_serves_echo_and_stops_cleanly_on_sigterm) {
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", config_text());
  daemon_process d({"--config", "xconnd.yaml"}, dir.path());
  auto port = d.wait_listening();
  ASSERT_NE(port, 0) << d.console();

  auto key_file = dir.path() / "var" / "xconn" / "api_key";
  ASSERT_TRUE(std::filesystem::exists(key_file));
  struct stat st {};
  ASSERT_EQ(::stat(key_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  std::string key = read_file(key_file);
  EXPECT_GE(key.size(), 32u);
  EXPECT_NE(d.console().find(key_file.string().substr(dir.str().size() + 1)), std::string::npos) << d.console();

  EXPECT_EQ(http_get(port, "/connectors/echo/health", key).status, 200);
  EXPECT_EQ(http_get(port, "/connectors/echo/connector-card.json").status, 200);
  auto ws = ws_client::connect(port, "/connectors/echo/ws", {key, "xagent.connector.packet.v1"});
  ASSERT_TRUE(ws);
  ASSERT_TRUE(ws->hello());

  d.signal(SIGTERM);
  EXPECT_EQ(ws->wait_closed(), 1001);
  EXPECT_EQ(d.wait_exit(), 0) << d.console();
  EXPECT_EQ(d.console().find(key), std::string::npos) << "the key reached the console";

  // The second start keeps the same key.
  daemon_process again({"--config", "xconnd.yaml"}, dir.path());
  auto port2 = again.wait_listening();
  ASSERT_NE(port2, 0);
  EXPECT_EQ(http_get(port2, "/connectors/echo/health", key).status, 200);
  again.signal(SIGINT);
  EXPECT_EQ(again.wait_exit(), 0);
}

TEST(daemon, sighup_reloads_a_replaced_plugin_and_keeps_the_socket) {
  temp_dir dir;
  auto plugins = own_plugin_folder(dir, "  watch: false\n");
  daemon_process d({"--config", "xconnd.yaml"}, dir.path());
  auto port = d.wait_listening();
  ASSERT_NE(port, 0) << d.console();
  std::string key = read_file(dir.path() / "var" / "xconn" / "api_key");
  auto ws = ws_client::connect(port, "/connectors/echo/ws", {key, "xagent.connector.packet.v1"});
  ASSERT_TRUE(ws);
  ASSERT_TRUE(ws->hello());
  auto version = [&] {
    auto list = http_get(port, "/connectors", key).json();
    return list.is_object() && !list.at("connectors").as_array().empty()
               ? std::string(list.at("connectors").as_array()[0].at("version").as_string())
               : std::string();
  };
  EXPECT_EQ(version(), "0.1.0");

  std::filesystem::copy_file(fixture_plugin_dir() / "echo-v2" / "echo.so", plugins / "echo.so.new");
  std::filesystem::rename(plugins / "echo.so.new", plugins / "echo.so");
  d.signal(SIGHUP);
  EXPECT_TRUE(wait_until([&] { return version() == "0.2.0"; }, std::chrono::seconds(20))) << d.console();
  EXPECT_TRUE(wait_until([&] {
    return d.console().find("plugin echo reloaded: generation 1 -> 2, version 0.1.0 -> 0.2.0") != std::string::npos;
  })) << d.console();
  EXPECT_FALSE(ws->closed());

  d.signal(SIGTERM);
  EXPECT_EQ(ws->wait_closed(), 1001);
  EXPECT_EQ(d.wait_exit(), 0) << d.console();
}

// docs/plugin-contract.md "When a plugin is gone": a lease that runs out while the plugin is removed deregisters its
// channels at once, and the plugin signs them out when it is back.
TEST(daemon, a_plugin_back_from_removal_signs_out_the_channels_deregistered_meanwhile) {
  temp_dir dir;
  auto plugins = own_plugin_folder(dir, "leases:\n  connector_offline_s: 1\n");
  daemon_process d({"--config", "xconnd.yaml"}, dir.path());
  auto port = d.wait_listening();
  ASSERT_NE(port, 0) << d.console();
  std::string key = read_file(dir.path() / "var" / "xconn" / "api_key");
  std::string channel;
  {
    auto client = dp_client::connect(port, key);
    ASSERT_TRUE(client);
    channel = client->open_authenticated();
    ASSERT_FALSE(channel.empty());
    std::filesystem::remove(plugins / "echo.so");
    EXPECT_EQ(client->ws().wait_closed(std::chrono::seconds(20)), 1001);
  }
  auto logged = [&](const std::string& text) {
    return wait_until([&] { return d.console().find(text) != std::string::npos; }, std::chrono::seconds(20));
  };
  ASSERT_TRUE(logged("channel " + channel + " of connector_id")) << d.console();
  EXPECT_EQ(d.console().find("channel " + channel + " signed out"), std::string::npos) << "echo was not loaded";

  std::filesystem::copy_file(plugin_dir() / "echo.so", plugins / "echo.so.new");
  std::filesystem::rename(plugins / "echo.so.new", plugins / "echo.so");
  EXPECT_TRUE(logged("channel " + channel + " signed out")) << d.console();
  EXPECT_TRUE(logged("channel " + channel + ": owed sign-out done")) << d.console();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << d.console();
}

TEST(daemon, check_config_validates_and_exits) {
  temp_dir dir;
  write_file(dir.path() / "good.yaml", config_text());
  daemon_process good({"--config", "good.yaml", "--check-config"}, dir.path());
  EXPECT_EQ(good.wait_exit(), 0) << good.console();
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "var")) << "--check-config must not create the store";

  write_file(dir.path() / "bad.yaml", config_text("  heartbeat_s: soon\n"));
  daemon_process bad({"--config", "bad.yaml", "--check-config"}, dir.path());
  EXPECT_EQ(bad.wait_exit(), 2);
  EXPECT_NE(bad.console().find("bad.yaml:3: server.heartbeat_s"), std::string::npos) << bad.console();
}

TEST(daemon, a_config_error_names_key_and_line_and_nothing_listens) {
  temp_dir dir;
  write_file(dir.path() / "typo.yaml", config_text("  heartbeet_s: 30\n"));
  daemon_process d({"--config", "typo.yaml"}, dir.path());
  EXPECT_EQ(d.wait_exit(), 2);
  EXPECT_NE(d.console().find("typo.yaml:3: server.heartbeet_s"), std::string::npos) << d.console();
  EXPECT_EQ(d.console().find("listening"), std::string::npos);

  write_file(dir.path() / "env.yaml", config_text("  api_keys: [\"${XCONN_TEST_UNSET_VARIABLE}\"]\n"));
  ::unsetenv("XCONN_TEST_UNSET_VARIABLE");
  daemon_process e({"--config", "env.yaml"}, dir.path());
  EXPECT_EQ(e.wait_exit(), 2);
  EXPECT_NE(e.console().find("XCONN_TEST_UNSET_VARIABLE"), std::string::npos) << e.console();

  daemon_process missing({"--config", "nowhere.yaml"}, dir.path());
  EXPECT_EQ(missing.wait_exit(), 2);
}

// A port already taken: the daemon says so and exits 1 (it crashed in its destructor with SIGSEGV).
TEST(daemon, a_port_in_use_is_a_clean_exit_with_the_reason) {
  server_fixture first;
  first.start();
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml",
             "server:\n  listen: \"127.0.0.1:" + std::to_string(first.port()) +
                 "\"\nstore:\n  path: \"./var/xconn\"\n  map_size_bytes: 67108864\nplugins:\n  dir: \"" +
                 plugin_dir().string() + "\"\n");
  daemon_process second({"--config", "xconnd.yaml"}, dir.path());
  EXPECT_EQ(second.wait_exit(), 1) << second.console();
  EXPECT_NE(second.console().find("cannot listen on 127.0.0.1:" + std::to_string(first.port())), std::string::npos)
      << second.console();
}

// A store whose data.mdb was cut short: the daemon says so and exits 1 (it died of SIGBUS, saying nothing).
TEST(daemon, a_store_cut_short_is_a_clean_exit_with_the_reason) {
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", config_text());
  {
    daemon_process d({"--config", "xconnd.yaml"}, dir.path());
    auto port = d.wait_listening();
    ASSERT_NE(port, 0) << d.console();
    auto key = read_file(dir.path() / "var" / "xconn" / "api_key");
    auto ws = ws_client::connect(port, "/connectors/echo/ws", {key, "xagent.connector.packet.v1"});
    ASSERT_TRUE(ws && ws->hello());  // a connector_id for the store to keep
    d.signal(SIGTERM);
    EXPECT_EQ(d.wait_exit(), 0) << d.console();
  }
  auto data = dir.path() / "var" / "xconn" / "data.mdb";
  std::filesystem::resize_file(data, std::filesystem::file_size(data) / 2);
  daemon_process cut({"--config", "xconnd.yaml"}, dir.path());
  EXPECT_EQ(cut.wait_exit(), 1) << cut.console();
  EXPECT_NE(cut.console().find("cut short"), std::string::npos) << cut.console();
}

// Out of file descriptors (64 allowed, 100 idle clients holding them): the daemon neither spins nor writes a line
// per failed accept (it wrote millions), and once the clients go it serves again within its back-off.
TEST(daemon, out_of_descriptors_the_accept_loop_backs_off_and_recovers) {
#if defined(__SANITIZE_ADDRESS__)
  // UBSan's own type checks need descriptors too: with none left it reports a false "invalid vptr" and aborts.
  GTEST_SKIP() << "not under the sanitizers: they cannot work without file descriptors";
#endif
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", config_text());
  daemon_process d({"--nofile=64:64", xconnd_path().string(), "--config", "xconnd.yaml"}, dir.path(), {},
                   "/usr/bin/prlimit");
  auto port = d.wait_listening();
  ASSERT_NE(port, 0) << d.console();
  auto key = read_file(dir.path() / "var" / "xconn" / "api_key");
  std::vector<std::unique_ptr<boost::asio::ip::tcp::socket>> idle;
  boost::asio::io_context io;
  for (int i = 0; i < 100; ++i) {
    auto s = std::make_unique<boost::asio::ip::tcp::socket>(io);
    boost::system::error_code ec;
    s->connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);  // the backlog takes them: connect succeeds
    if (!ec) idle.push_back(std::move(s));
  }
  ASSERT_TRUE(wait_until([&] { return d.console().find("accept: ") != std::string::npos; }, 10s)) << d.console();
  idle.clear();
  EXPECT_TRUE(wait_until([&] { return http_get(port, "/connectors/echo/health", key).status == 200; }, 10s));
  auto console = d.console();
  std::size_t reports = 0;
  for (auto at = console.find("accept: "); at != std::string::npos; at = console.find("accept: ", at + 1)) ++reports;
  EXPECT_LE(reports, 3u) << console.substr(0, 2000);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << console.substr(0, 2000);
}

TEST(daemon, raises_its_open_file_limit_for_max_connections_or_says_why_not) {
  // server.max_connections is 4096 by default: xconnd wants 4096 + 256 descriptors.
  rlimit mine{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &mine), 0);
  if (mine.rlim_max >= 4352) {
    temp_dir dir;
    write_file(dir.path() / "xconnd.yaml", config_text());
    daemon_process d({"--nofile=128:" + std::to_string(mine.rlim_max), xconnd_path().string(), "--config", "xconnd.yaml"},
                     dir.path(), {}, "/usr/bin/prlimit");
    ASSERT_NE(d.wait_listening(), 0) << d.console();
    EXPECT_NE(d.console().find("open-file limit raised from 128 to 4352"), std::string::npos) << d.console();
    auto limits = read_file("/proc/" + std::to_string(d.pid()) + "/limits");
    EXPECT_TRUE(std::regex_search(limits, std::regex(R"(Max open files +4352 )"))) << limits;
    d.signal(SIGTERM);
    EXPECT_EQ(d.wait_exit(), 0);
  }
  // A hard limit below the need: xconnd serves, and says why connections past it will wait.
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", config_text());
  daemon_process d({"--nofile=128:128", xconnd_path().string(), "--config", "xconnd.yaml"}, dir.path(), {},
                   "/usr/bin/prlimit");
  auto port = d.wait_listening();
  ASSERT_NE(port, 0) << d.console();
  EXPECT_NE(d.console().find("open-file limit: 128 (hard limit 128), but server.max_connections 4096 needs 4352"),
            std::string::npos)
      << d.console();
  auto key = read_file(dir.path() / "var" / "xconn" / "api_key");
  EXPECT_EQ(http_get(port, "/connectors/echo/health", key).status, 200);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0);
}

TEST(daemon, planted_secrets_never_reach_the_log) {
  temp_dir dir;
  const std::string api_key = "PLANTED-API-KEY-7f3a9c2e4b";
  const std::string auth_secret = "PLANTED-AUTH-SECRET-91d0e6";
  write_file(dir.path() / "xconnd.yaml",
             config_text("  api_keys: [\"${XCONN_TEST_KEY}\"]\n",
                         "connectors:\n  echo:\n    auth:\n      token: \"" + auth_secret + "\"\n"));
  daemon_process d({"--config", "xconnd.yaml"}, dir.path(), {{"XCONN_TEST_KEY", api_key}});
  auto port = d.wait_listening();
  ASSERT_NE(port, 0) << d.console();
  // echo accepts no auth keys: it is refused, naming the key, never the value.
  EXPECT_NE(d.console().find("auth.token"), std::string::npos) << d.console();
  auto list = http_get(port, "/connectors", api_key);
  EXPECT_EQ(list.status, 200);
  EXPECT_EQ(list.body.find(auth_secret), std::string::npos);
  EXPECT_EQ(list.body.find(api_key), std::string::npos);
  // Wrong keys, hostile paths and bodies carrying the secrets are answered without echoing them.
  auto r = http_call(port, "GET", "/connectors/" + auth_secret + "/health", {{"Authorization", "Bearer " + api_key}});
  EXPECT_EQ(r.body.find(auth_secret), std::string::npos);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0);
  auto console = d.console();
  EXPECT_EQ(console.find(api_key), std::string::npos) << console;
  EXPECT_EQ(console.find(auth_secret), std::string::npos) << console;
}

}  // namespace
}  // namespace xconn::test
