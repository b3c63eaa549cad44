#include "core/base/config.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "support/test_support.hpp"

namespace xconn {
namespace {

constexpr const char* planted_secret = "sk-PLANTED-SECRET-123456";

config parse_ok(const std::string& yaml) {
  auto result = parse_config(yaml, "test.yaml");
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().what());
  return result ? *result : config{};
}

config_error parse_err(const std::string& yaml) {
  auto result = parse_config(yaml, "test.yaml");
  EXPECT_FALSE(result.has_value()) << "expected an error for:\n" << yaml.substr(0, 200);
  return result ? config_error{} : result.error();
}

// Asserts the error names exactly this key and line.
#define EXPECT_CONFIG_ERROR(yaml, want_key, want_line)                          \
  do {                                                                           \
    auto err_ = parse_err(yaml);                                                 \
    EXPECT_EQ(err_.key, want_key) << err_.what();                               \
    EXPECT_EQ(err_.line, want_line) << err_.what();                             \
    EXPECT_FALSE(err_.message.empty());                                          \
  } while (0)

TEST(Config, EmptyDocumentGivesDefaults) {
  for (const char* doc : {"", "# only a comment\n", "---\n", "\n\n"}) {
    config c = parse_ok(doc);
    EXPECT_EQ(c.server.listen, "127.0.0.1:8840");
    EXPECT_EQ(c.server.public_base_url, "");
    EXPECT_TRUE(c.server.api_keys.empty());
    EXPECT_EQ(c.server.io_threads, 0);
    EXPECT_EQ(c.server.heartbeat_s, 30);
    EXPECT_EQ(c.server.max_frame_bytes, 1048576u);
    EXPECT_EQ(c.store.path, "./var/xconn");
    EXPECT_EQ(c.store.map_size_bytes, 8589934592ull);
    EXPECT_EQ(c.plugins.dir, "./build/plugins");
    EXPECT_TRUE(c.plugins.watch);
    EXPECT_TRUE(c.plugins.allow.empty());
    EXPECT_EQ(c.plugins.threads, 4);
    EXPECT_EQ(c.plugins.reload_pause_max_calls, 10000);
    EXPECT_EQ(c.plugins.reload_pause_max_s, 10);
    EXPECT_EQ(c.leases.connector_offline_s, 3600);
    EXPECT_EQ(c.leases.unauthenticated_channel_s, 600);
    EXPECT_EQ(c.delivery.window, 32);
    EXPECT_EQ(c.delivery.ack_timeout_s, 10);
    EXPECT_EQ(c.delivery.retry_max_s, 300);
    EXPECT_EQ(c.delivery.send_timeout_s, 30);
    EXPECT_EQ(c.delivery.expiry_s, 3600);
    EXPECT_EQ(c.delivery.max_pending_per_channel, 1000);
    EXPECT_EQ(c.delivery.delta_ttl_s, 600);
    EXPECT_EQ(c.delivery.max_open_deltas_per_channel, 64);
    EXPECT_EQ(c.delivery.completed_ids_s, 86400);
    EXPECT_TRUE(c.delivery.context_in_text);
    EXPECT_EQ(c.tools.timeout_s, 30);
    EXPECT_EQ(c.tools.idempotency_s, 86400);
    EXPECT_EQ(c.files.max_bytes, 104857600u);
    EXPECT_EQ(c.files.ttl_s, 604800);
    EXPECT_EQ(c.files.url_ttl_s, 3600);
    EXPECT_TRUE(c.connectors.empty());
  }
}

TEST(Config, MissingKeysAndSectionsTakeDefaults) {
  config c = parse_ok("server:\n  io_threads: 8\nstore:\nplugins: {}\n");
  EXPECT_EQ(c.server.io_threads, 8);
  EXPECT_EQ(c.server.heartbeat_s, 30);
  EXPECT_EQ(c.store.path, "./var/xconn");
  EXPECT_EQ(c.plugins.threads, 4);
  EXPECT_EQ(c.delivery.window, 32);
}

TEST(Config, ReadsEveryKey) {
  config c = parse_ok(R"(server:
  listen: "[::1]:0"
  public_base_url: "https://example.com/xconn"
  api_keys: ["0123456789abcdef", 0123456789012345678]
  io_threads: 2
  heartbeat_s: 5
  max_frame_bytes: 2048
store: {path: /tmp/x, map_size_bytes: 1048576}
plugins: {dir: /p, watch: false, allow: [echo, my-plugin], threads: 2, reload_pause_max_calls: 0, reload_pause_max_s: 3}
leases: {connector_offline_s: 1, unauthenticated_channel_s: 2}
delivery: {window: 1024, ack_timeout_s: 3, retry_max_s: 3, send_timeout_s: 4, expiry_s: 5, max_pending_per_channel: 6,
           delta_ttl_s: 7, max_open_deltas_per_channel: 8, completed_ids_s: 9, context_in_text: False}
tools: {timeout_s: 11, idempotency_s: 12}
files: {max_bytes: 13, ttl_s: 14, url_ttl_s: 15}
)");
  EXPECT_EQ(c.server.listen, "[::1]:0");
  EXPECT_EQ(c.server.public_base_url, "https://example.com/xconn");
  ASSERT_EQ(c.server.api_keys.size(), 2u);
  EXPECT_EQ(c.server.api_keys[1], "0123456789012345678");  // raw text, not a reformatted number
  EXPECT_EQ(c.server.io_threads, 2);
  EXPECT_EQ(c.server.max_frame_bytes, 2048u);
  EXPECT_EQ(c.store.path, "/tmp/x");
  EXPECT_FALSE(c.plugins.watch);
  EXPECT_EQ(c.plugins.allow, (std::vector<std::string>{"echo", "my-plugin"}));
  EXPECT_EQ(c.plugins.reload_pause_max_calls, 0);
  EXPECT_EQ(c.delivery.window, 1024);
  EXPECT_FALSE(c.delivery.context_in_text);
  EXPECT_EQ(c.files.url_ttl_s, 15);
}

TEST(Config, EmbeddedDefaultConfigParses) {
  auto path = (test::source_dir() / "conf" / "xconnd.yaml").string();
  auto result = load_config(path);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  EXPECT_EQ(result->source_path, path);
  EXPECT_EQ(result->server.listen, "127.0.0.1:8840");
  EXPECT_EQ(result->store.path, "./var/xconn");
  EXPECT_EQ(result->plugins.dir, "./build/plugins");
  ASSERT_EQ(result->connectors.count("echo"), 1u);
  EXPECT_GT(result->connectors.at("echo").line, 0);
  EXPECT_EQ(result->connectors.at("echo").to_json(), R"({"auth":{},"config":{},"route":{},"policy":{}})");
}

TEST(Config, UnknownKeys) {
  EXPECT_CONFIG_ERROR("server: {}\nserverr:\n  x: 1\n", "serverr", 2);
  EXPECT_CONFIG_ERROR("server:\n  listen: \"127.0.0.1:1\"\n  bogus: 1\n", "server.bogus", 3);
  EXPECT_CONFIG_ERROR("delivery:\n\n  windows: 3\n", "delivery.windows", 3);
  EXPECT_CONFIG_ERROR("files: {max_bytes: 1, ttl: 2}\n", "files.ttl", 1);
}

TEST(Config, DuplicateKeys) {
  EXPECT_CONFIG_ERROR("server:\n  io_threads: 1\n  io_threads: 2\n", "server.io_threads", 3);
  EXPECT_CONFIG_ERROR("store: {}\nstore: {}\n", "store", 2);
}

TEST(Config, WrongTypes) {
  EXPECT_CONFIG_ERROR("server:\n  io_threads: abc\n", "server.io_threads", 2);
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s:\n    a: 1\n", "server.heartbeat_s", 2);
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s: [1]\n", "server.heartbeat_s", 2);
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s: 1.5\n", "server.heartbeat_s", 2);
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s:\n", "server.heartbeat_s", 2);
  EXPECT_CONFIG_ERROR("plugins:\n  watch: yes\n", "plugins.watch", 2);
  EXPECT_CONFIG_ERROR("store: 5\n", "store", 1);
  EXPECT_CONFIG_ERROR("store:\n  path: {a: b}\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("server:\n  api_keys: \"0123456789abcdef\"\n", "server.api_keys", 2);
  EXPECT_CONFIG_ERROR("server:\n  api_keys:\n    - [x]\n", "server.api_keys[0]", 3);
  EXPECT_CONFIG_ERROR("connectors: [echo]\n", "connectors", 1);
}

TEST(Config, OutOfRange) {
  EXPECT_CONFIG_ERROR("server:\n  io_threads: 257\n", "server.io_threads", 2);
  EXPECT_CONFIG_ERROR("server:\n  io_threads: -1\n", "server.io_threads", 2);
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s: 0\n", "server.heartbeat_s", 2);
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s: 99999999999999999999999\n", "server.heartbeat_s", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_frame_bytes: 1023\n", "server.max_frame_bytes", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_frame_bytes: 67108865\n", "server.max_frame_bytes", 2);
  EXPECT_CONFIG_ERROR("plugins:\n  threads: 65\n", "plugins.threads", 2);
  EXPECT_CONFIG_ERROR("plugins:\n  threads: 0\n", "plugins.threads", 2);
  EXPECT_CONFIG_ERROR("delivery:\n  window: 1025\n", "delivery.window", 2);
  EXPECT_CONFIG_ERROR("tools:\n  timeout_s: -5\n", "tools.timeout_s", 2);
  EXPECT_CONFIG_ERROR("files:\n  ttl_s: 0\n", "files.ttl_s", 2);
  EXPECT_CONFIG_ERROR("store:\n  path: \"\"\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("server:\n  api_keys: [\"short\"]\n", "server.api_keys[0]", 2);
  EXPECT_CONFIG_ERROR("server:\n  api_keys:\n    - 0123456789abcdef\n    - \"\"\n", "server.api_keys[1]", 4);
  EXPECT_CONFIG_ERROR("server:\n  api_keys: [\"0123456789 abcdef\"]\n", "server.api_keys[0]", 2);
  // retry_max_s caps a doubling that starts at ack_timeout_s.
  EXPECT_CONFIG_ERROR("delivery:\n  ack_timeout_s: 20\n  retry_max_s: 10\n", "delivery.retry_max_s", 3);
  EXPECT_CONFIG_ERROR("delivery:\n  ack_timeout_s: 3000\n", "delivery.ack_timeout_s", 2);
}

TEST(Config, Listen) {
  for (const char* good : {"127.0.0.1:8840", "0.0.0.0:0", "localhost:65535", "[::1]:8840", "[::]:0", "my-host.example:1"})
    EXPECT_EQ(parse_ok(std::string("server:\n  listen: \"") + good + "\"\n").server.listen, good);
  for (const char* bad : {"127.0.0.1", "127.0.0.1:65536", ":80", "::1:80", "[::1]", "[zz]:80", "host:port", "a b:80",
                          "127.0.0.1:", "[::1]:123456", "host:-1", "http://x:80"})
    EXPECT_CONFIG_ERROR(std::string("server:\n  listen: \"") + bad + "\"\n", "server.listen", 2);
}

TEST(Config, PublicBaseUrl) {
  for (const char* good : {"", "http://example.com", "https://example.com:8443/base/"})
    EXPECT_EQ(parse_ok(std::string("server:\n  public_base_url: \"") + good + "\"\n").server.public_base_url, good);
  for (const char* bad : {"ftp://x", "http://x/?q=1", "http://x#f", "http://", "example.com", "https:///path", "http://a b"})
    EXPECT_CONFIG_ERROR(std::string("server:\n  public_base_url: \"") + bad + "\"\n", "server.public_base_url", 2);
}

TEST(Config, PluginAllowList) {
  EXPECT_CONFIG_ERROR("plugins:\n  allow: [echo, Bad_Id]\n", "plugins.allow[1]", 2);
  EXPECT_CONFIG_ERROR("plugins:\n  allow:\n    - echo\n    - echo\n", "plugins.allow[1]", 4);
  EXPECT_CONFIG_ERROR("plugins:\n  allow: [\"" + std::string(33, 'a') + "\"]\n", "plugins.allow[0]", 2);
  std::string seventeen = "plugins:\n  allow: [";
  for (int i = 0; i < 17; ++i) seventeen += (i ? ", p" : "p") + std::to_string(i);
  EXPECT_CONFIG_ERROR(seventeen + "]\n", "plugins.allow", 2);
}

TEST(Config, ConnectorIdsAndGroups) {
  EXPECT_CONFIG_ERROR("connectors:\n  Echo:\n    auth: {}\n", "connectors.Echo", 2);
  EXPECT_CONFIG_ERROR("connectors:\n  echo_1: {}\n", "connectors.echo_1", 2);
  EXPECT_CONFIG_ERROR("connectors:\n  " + std::string(33, 'a') + ": {}\n", "connectors." + std::string(33, 'a'), 2);
  EXPECT_CONFIG_ERROR("connectors:\n  echo:\n    auth: {}\n    secrets: {}\n", "connectors.echo.secrets", 4);
  EXPECT_CONFIG_ERROR("connectors:\n  echo:\n    config: [1]\n", "connectors.echo.config", 3);
  EXPECT_CONFIG_ERROR("connectors:\n  echo:\n    config: text\n", "connectors.echo.config", 3);
  EXPECT_CONFIG_ERROR("connectors:\n  echo: 5\n", "connectors.echo", 2);
  EXPECT_CONFIG_ERROR("connectors:\n  echo:\n    config:\n      a: 1\n      a: 2\n", "connectors.echo.config.a", 5);
}

TEST(Config, ConnectorGroupsConvertToJson) {
  config c = parse_ok(R"(connectors:
  tg:
    auth:
      token: "12345"
    config:
      greeting: hello
      count: 3
      negative: -7
      hex: 0x1F
      ratio: 1.5
      exp: 2e3
      half: .5
      inf: .inf
      version: 1.2.3
      on: true
      off: False
      nothing: ~
      empty:
      quoted_bool: "true"
      single: '42'
      tagged: !!str 7
      list: [1, "a", {x: 1}]
      nested:
        a:
          b: c
    route: {}
  other: {}
  bare:
)");
  ASSERT_EQ(c.connectors.size(), 3u);
  const connector_section& s = c.connectors.at("tg");
  EXPECT_EQ(s.line, 2);
  EXPECT_EQ(s.auth.at("token"), "12345");
  const auto& cfg = s.config;
  EXPECT_EQ(cfg.at("greeting"), "hello");
  EXPECT_EQ(cfg.at("count"), 3);
  EXPECT_TRUE(cfg.at("count").is_int64());
  EXPECT_EQ(cfg.at("negative"), -7);
  EXPECT_EQ(cfg.at("hex"), 31);
  EXPECT_TRUE(cfg.at("ratio").is_double());
  EXPECT_DOUBLE_EQ(cfg.at("ratio").as_double(), 1.5);
  EXPECT_DOUBLE_EQ(cfg.at("exp").as_double(), 2000.0);
  EXPECT_DOUBLE_EQ(cfg.at("half").as_double(), 0.5);
  EXPECT_EQ(cfg.at("inf"), ".inf");
  EXPECT_EQ(cfg.at("version"), "1.2.3");
  EXPECT_EQ(cfg.at("on"), true);
  EXPECT_EQ(cfg.at("off"), false);
  EXPECT_TRUE(cfg.at("nothing").is_null());
  EXPECT_TRUE(cfg.at("empty").is_null());
  EXPECT_EQ(cfg.at("quoted_bool"), "true");
  EXPECT_EQ(cfg.at("single"), "42");
  EXPECT_EQ(cfg.at("tagged"), "7");
  EXPECT_EQ(cfg.at("list"), boost::json::parse(R"([1,"a",{"x":1}])"));
  EXPECT_EQ(cfg.at("nested"), boost::json::parse(R"({"a":{"b":"c"}})"));
  EXPECT_TRUE(s.route.empty());
  EXPECT_TRUE(s.policy.empty());

  EXPECT_EQ(s.key_lines.at("auth"), 3);
  EXPECT_EQ(s.key_lines.at("auth.token"), 4);
  EXPECT_EQ(s.key_lines.at("config.greeting"), 6);
  EXPECT_EQ(s.key_lines.at("config.list"), 22);
  EXPECT_EQ(s.key_lines.at("config.list[2].x"), 22);
  EXPECT_EQ(s.key_lines.at("config.nested.a.b"), 25);
  EXPECT_EQ(s.key_lines.at("route"), 26);

  auto json = boost::json::parse(s.to_json()).as_object();
  EXPECT_EQ(json.size(), 4u);
  EXPECT_EQ(json.at("auth"), boost::json::parse(R"({"token":"12345"})"));
  EXPECT_EQ(c.connectors.at("other").to_json(), R"({"auth":{},"config":{},"route":{},"policy":{}})");
  EXPECT_EQ(c.connectors.at("bare").to_json(), R"({"auth":{},"config":{},"route":{},"policy":{}})");
  EXPECT_EQ(c.connectors.at("bare").line, 28);
}

TEST(Config, EnvironmentExpansion) {
  ::setenv("XCONN_TEST_PORT", "9000", 1);
  ::setenv("XCONN_TEST_KEY", "0123456789abcdef-from-env", 1);
  ::setenv("XCONN_TEST_HB", "4", 1);
  config c = parse_ok(R"(server:
  listen: "127.0.0.1:${XCONN_TEST_PORT}"
  api_keys: ["${XCONN_TEST_KEY}"]
  heartbeat_s: ${XCONN_TEST_HB}5
  max_frame_bytes: "${XCONN_TEST_PORT}"
store:
  path: /a/${XCONN_TEST_PORT}/$${XCONN_TEST_PORT}/${XCONN_TEST_PORT}
connectors:
  echo:
    config:
      port: ${XCONN_TEST_PORT}
      quoted: "${XCONN_TEST_PORT}"
)");
  EXPECT_EQ(c.server.listen, "127.0.0.1:9000");
  EXPECT_EQ(c.server.api_keys, (std::vector<std::string>{"0123456789abcdef-from-env"}));
  EXPECT_EQ(c.server.heartbeat_s, 45);
  EXPECT_EQ(c.server.max_frame_bytes, 9000u);
  EXPECT_EQ(c.store.path, "/a/9000/$9000/9000");
  EXPECT_EQ(c.connectors.at("echo").config.at("port"), 9000);  // plain: typed after expansion
  EXPECT_EQ(c.connectors.at("echo").config.at("quoted"), "9000");
}

TEST(Config, EnvironmentExpansionErrors) {
  ::setenv("XCONN_TEST_PORT", "9000", 1);
  // 90000 is out of range for heartbeat_s: the expanded value is range checked.
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s: ${XCONN_TEST_PORT}0\n", "server.heartbeat_s", 2);
  ::unsetenv("XCONN_TEST_UNSET_VAR");
  auto err = parse_err("store:\n  path: \"${XCONN_TEST_UNSET_VAR}/x\"\n");
  EXPECT_EQ(err.key, "store.path");
  EXPECT_EQ(err.line, 2);
  EXPECT_EQ(err.message, "environment variable XCONN_TEST_UNSET_VAR is not set");
  EXPECT_CONFIG_ERROR("connectors:\n  echo:\n    auth:\n      token: ${XCONN_TEST_UNSET_VAR}\n",
                      "connectors.echo.auth.token", 4);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${XCONN_TEST_PORT\"\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${1BAD}\"\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${}\"\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${A-B}\"\n", "store.path", 2);
}

TEST(Config, SecretsNeverAppearInErrors) {
  const std::string s = planted_secret;
  ::setenv("XCONN_TEST_SECRET", planted_secret, 1);
  ::unsetenv("XCONN_TEST_UNSET_VAR");
  const std::vector<std::string> docs = {
      "server:\n  io_threads: " + s + "\n",
      "server:\n  heartbeat_s: \"" + s + "\"\n",
      "server:\n  api_keys: " + s + "\n",
      "server:\n  api_keys: {" + s + ": 1}\n",
      "server:\n  api_keys: [\"sk-PLANTED\"]\n",
      "server:\n  api_keys: [\"" + s + " x\"]\n",
      "server:\n  listen: " + s + "\n",
      "server:\n  public_base_url: " + s + "\n",
      "plugins:\n  allow: [" + s + "]\n",
      "plugins:\n  watch: " + s + "\n",
      "server:\n  io_threads: ${XCONN_TEST_SECRET}\n",
      "store:\n  path: " + s + "${XCONN_TEST_UNSET_VAR}\n",
      "store:\n  path: \"" + s + "${XCONN_TEST_SECRET\"\n",
      "connectors:\n  echo:\n    auth:\n      token: " + s + "${XCONN_TEST_UNSET_VAR}\n",
      "server:\n  api_keys: [\"" + s + "\\q\"]\n",   // parser error inside the secret's scalar
      "server:\n  api_keys: [\"" + s + "\\x\"]\n",
      "server:\n  api_keys: [\"" + s + "\n",       // unterminated
      "server: \"" + s + "\"\n",
      s + "\n",
  };
  for (const auto& doc : docs) {
    auto err = parse_err(doc);
    EXPECT_EQ(err.what().find("PLANTED"), std::string::npos) << err.what();
    EXPECT_EQ(err.what().find("SECRET-123456"), std::string::npos) << err.what();
  }
}

TEST(Config, ErrorFormat) {
  EXPECT_EQ((config_error{"a.b", 3, "bad", "f.yaml"}).what(), "f.yaml:3: a.b: bad");
  EXPECT_EQ((config_error{"a.b", 0, "bad", "f.yaml"}).what(), "f.yaml: a.b: bad");
  EXPECT_EQ((config_error{"", 3, "bad", "f.yaml"}).what(), "f.yaml:3: bad");
  EXPECT_EQ((config_error{"", 0, "bad", "f.yaml"}).what(), "f.yaml: bad");
  auto err = parse_err("server:\n  bogus: 1\n");
  EXPECT_EQ(err.file, "test.yaml");
  EXPECT_EQ(err.what(), "test.yaml:2: server.bogus: unknown key");
}

TEST(Config, ValueThrowsRuntimeError) {
  auto result = parse_config("bogus: 1\n");
  EXPECT_THROW((void)result.value(), std::runtime_error);
}

TEST(Config, LoadConfigFileErrors) {
  test::temp_dir dir;
  auto missing = (dir.path() / "missing.yaml").string();
  auto r1 = load_config(missing);
  ASSERT_FALSE(r1.has_value());
  EXPECT_EQ(r1.error().key, "");
  EXPECT_EQ(r1.error().line, 0);
  EXPECT_EQ(r1.error().file, missing);
  EXPECT_FALSE(r1.error().message.empty());

  EXPECT_FALSE(load_config(dir.str()).has_value());

  auto big = dir.path() / "big.yaml";
  test::write_file(big, std::string(2 * 1024 * 1024, '#'));
  auto r2 = load_config(big.string());
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().line, 0);

  auto good = dir.path() / "good.yaml";
  test::write_file(good, "server:\n  io_threads: 3\n");
  auto r3 = load_config(good.string());
  ASSERT_TRUE(r3.has_value());
  EXPECT_EQ(r3->server.io_threads, 3);
  EXPECT_EQ(r3->source_path, good.string());

  auto bad = dir.path() / "bad.yaml";
  test::write_file(bad, "server:\n  nope: 1\n");
  auto r4 = load_config(bad.string());
  ASSERT_FALSE(r4.has_value());
  EXPECT_EQ(r4.error().what(), bad.string() + ":2: server.nope: unknown key");
}

// --- hostile input: each must fail fast and cleanly ---

TEST(ConfigHostile, BillionLaughs) {
  std::string doc = "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (int i = 1; i < 10; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    doc += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) {
      if (k) doc += ',';
      doc += prev;
    }
    doc += "]\n";
  }
  auto start = std::chrono::steady_clock::now();
  auto err = parse_err(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(err.line, 1);
  // Inside a connector group, where any shape is allowed, it is refused just the same.
  EXPECT_FALSE(parse_config("connectors:\n  echo:\n    config:\n      a: &x [1]\n      b: *x\n").has_value());
  EXPECT_FALSE(parse_config("server:\n  io_threads: &n 1\n").has_value());
  EXPECT_FALSE(parse_config("server:\n  io_threads: *n\n").has_value());
  EXPECT_FALSE(parse_config("store: &s {}\n").has_value());
}

TEST(ConfigHostile, OversizedDocument) {
  std::string doc = "server: {}\n" + std::string(2 * 1024 * 1024, '#');
  auto err = parse_err(doc);
  EXPECT_EQ(err.line, 0);
  EXPECT_EQ(err.key, "");
  // Just under the limit is fine.
  parse_ok("# " + std::string(1024 * 1024 - 10, 'x') + "\n");
}

TEST(ConfigHostile, HugeScalar) {
  auto err = parse_err("store:\n  path: \"" + std::string(100 * 1024, 'x') + "\"\n");
  EXPECT_EQ(err.line, 2);
  EXPECT_FALSE(parse_config("connectors:\n  echo:\n    config:\n      " + std::string(100 * 1024, 'k') + ": 1\n").has_value());
  ::setenv("XCONN_TEST_BIG", std::string(40 * 1024, 'y').c_str(), 1);
  EXPECT_CONFIG_ERROR("store:\n  path: ${XCONN_TEST_BIG}${XCONN_TEST_BIG}\n", "store.path", 2);
}

TEST(ConfigHostile, DeepNesting) {
  std::string flow = "connectors:\n  echo:\n    config:\n      deep: " + std::string(100, '[') + std::string(100, ']') + "\n";
  EXPECT_FALSE(parse_config(flow).has_value());
  std::string block = "connectors:\n  echo:\n    config:\n";
  for (int i = 0; i < 100; ++i) block += std::string(6 + 2 * i, ' ') + "k" + std::to_string(i) + ":\n";
  EXPECT_FALSE(parse_config(block).has_value());
  // Far past yaml-cpp's own recursion guard: still an error, not a crash.
  EXPECT_FALSE(parse_config(std::string(100000, '[')).has_value());
  EXPECT_FALSE(parse_config(std::string(100000, '{')).has_value());
  // 32 levels in all are allowed: top map, connectors, echo, config + 28 more.
  std::string ok = "connectors:\n  echo:\n    config:\n      deep: " + std::string(28, '[') + std::string(28, ']') + "\n";
  parse_ok(ok);
}

TEST(ConfigHostile, TooManyNodes) {
  std::string doc = "connectors:\n  echo:\n    config:\n      many: [";
  for (int i = 0; i < 150000; ++i) doc += i ? ",0" : "0";
  doc += "]\n";
  auto err = parse_err(doc);
  EXPECT_EQ(err.line, 4);
}

TEST(ConfigHostile, MultipleDocuments) {
  EXPECT_CONFIG_ERROR("server: {}\n---\nstore: {}\n", "", 2);  // the second "---"
  EXPECT_CONFIG_ERROR("---\nserver: {}\n...\n---\n", "", 4);
}

TEST(ConfigHostile, TopLevelNotAMap) {
  EXPECT_CONFIG_ERROR("- a\n- b\n", "", 1);
  EXPECT_CONFIG_ERROR("just a string\n", "", 1);
  EXPECT_CONFIG_ERROR("\n42\n", "", 2);
  EXPECT_CONFIG_ERROR("? [a]\n: b\n", "", 1);  // a key that is not a string
}

TEST(ConfigHostile, BinaryGarbage) {
  EXPECT_CONFIG_ERROR(std::string("server:\n  listen: \"a\0b\"\n", 22), "", 2);
  EXPECT_CONFIG_ERROR("server:\n  listen: \"\xff\xfe\"\n", "", 2);
  EXPECT_CONFIG_ERROR("a: \xc0\xaf\n", "", 1);       // overlong '/'
  EXPECT_CONFIG_ERROR("a: \xed\xa0\x80\n", "", 1);   // surrogate
  EXPECT_CONFIG_ERROR("a: \xe2\x82\n", "", 1);       // truncated
  EXPECT_CONFIG_ERROR("a: \x1b[31m\n", "", 1);       // escape sequence
  parse_ok("connectors:\n  echo:\n    config:\n      text: \"h\xc3\xa9llo \xf0\x9f\x98\x80\"\n");
  // Random bytes: always an error or a value, quickly, never a crash.
  std::mt19937 rng(42);
  for (int round = 0; round < 300; ++round) {
    std::string doc(1 + rng() % 512, '\0');
    for (auto& c : doc) c = static_cast<char>(rng());
    (void)parse_config(doc);
    for (auto& c : doc) c = " \n\t:-[]{}\"'&*!|>#%@,?~abc0123"[rng() % 30];
    (void)parse_config(doc);
  }
}

TEST(ConfigHostile, Tabs) {
  EXPECT_CONFIG_ERROR("server:\n\tio_threads: 4\n", "", 2);
  // A tab inside a quoted value is just a character.
  EXPECT_EQ(parse_ok("store:\n  path: \"a\tb\"\n").store.path, "a\tb");
}

}  // namespace
}  // namespace xconn
