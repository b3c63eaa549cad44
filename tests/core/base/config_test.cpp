// parse_config: defaults, every key, unknown and duplicate keys, types and ranges, and the connector groups.
#include "core/base/config.hpp"

#include "support/config_parsing.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace xconn::test {
namespace {

TEST(Config, EmptyDocumentGivesDefaults) {
  for (const char* doc : {"", "# only a comment\n", "---\n", "\n\n"}) {
    config c = parse_ok(doc);
    EXPECT_EQ(c.server.listen, "127.0.0.1:8840");
    EXPECT_EQ(c.server.public_base_url, "");
    EXPECT_TRUE(c.server.api_keys.empty());
    EXPECT_EQ(c.server.io_threads, 0);
    EXPECT_EQ(c.server.heartbeat_s, 30);
    EXPECT_EQ(c.server.hello_timeout_s, 30);
    EXPECT_EQ(c.server.max_outbox_bytes, 16777216u);
    EXPECT_EQ(c.server.max_frame_bytes, 1048576u);
    EXPECT_EQ(c.server.max_connections, 4096);
    EXPECT_EQ(c.server.max_public_body_bytes, 33554432u);
    EXPECT_EQ(c.store.path, "./var/xconn");
    EXPECT_EQ(c.store.map_size_bytes, 8589934592ull);
    EXPECT_EQ(c.plugins.dir, "./build/plugins");
    EXPECT_TRUE(c.plugins.watch);
    EXPECT_TRUE(c.plugins.allow.empty());
    EXPECT_EQ(c.plugins.threads, 4);
    EXPECT_EQ(c.plugins.inline_budget_us, 200);
    EXPECT_EQ(c.plugins.reload_pause_max_calls, 10000);
    EXPECT_EQ(c.plugins.reload_pause_max_s, 10);
    EXPECT_EQ(c.leases.connector_offline_s, 3600);
    EXPECT_EQ(c.leases.unauthenticated_channel_s, 600);
    EXPECT_EQ(c.leases.max_temporary_per_connector_id, 256);
    EXPECT_EQ(c.leases.max_temporary_per_connector, 4096);
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
    EXPECT_EQ(c.files.upload_min_bytes_per_s, 16384u);
    EXPECT_EQ(c.files.upload_grace_s, 30);
    EXPECT_EQ(c.log.format, "text");
    EXPECT_EQ(c.log.file, "");
    EXPECT_EQ(c.log.level, "info");
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
  hello_timeout_s: 7
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
  EXPECT_EQ(c.server.hello_timeout_s, 7);
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
  EXPECT_EQ(result->log.format, "text");
  EXPECT_EQ(result->log.file, "");
  EXPECT_EQ(result->log.level, "info");
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
  EXPECT_CONFIG_ERROR("server:\n  hello_timeout_s: 0\n", "server.hello_timeout_s", 2);
  EXPECT_CONFIG_ERROR("server:\n  hello_timeout_s: 3601\n", "server.hello_timeout_s", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_outbox_bytes: 65535\n", "server.max_outbox_bytes", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_outbox_bytes: 1073741825\n", "server.max_outbox_bytes", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_outbox_bytes: -1\n", "server.max_outbox_bytes", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_connections: 0\n", "server.max_connections", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_connections: 1000001\n", "server.max_connections", 2);
  // Below one public body (1 MiB, the HTTP body limit) no public request could ever be read.
  EXPECT_CONFIG_ERROR("server:\n  max_public_body_bytes: 1048575\n", "server.max_public_body_bytes", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_public_body_bytes: 1073741825\n", "server.max_public_body_bytes", 2);
  EXPECT_CONFIG_ERROR("server:\n  max_public_body_bytes: -1\n", "server.max_public_body_bytes", 2);
  EXPECT_EQ(parse_ok("server:\n  max_public_body_bytes: 1048576\n").server.max_public_body_bytes, 1048576u);
  EXPECT_EQ(parse_ok("server:\n  max_public_body_bytes: 1073741824\n").server.max_public_body_bytes, 1073741824u);
  EXPECT_CONFIG_ERROR("leases:\n  max_temporary_per_connector_id: 0\n", "leases.max_temporary_per_connector_id", 2);
  EXPECT_CONFIG_ERROR("leases:\n  max_temporary_per_connector: 10000001\n", "leases.max_temporary_per_connector", 2);
  EXPECT_CONFIG_ERROR("files:\n  upload_min_bytes_per_s: 0\n", "files.upload_min_bytes_per_s", 2);
  EXPECT_CONFIG_ERROR("files:\n  upload_grace_s: 3601\n", "files.upload_grace_s", 2);
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
  EXPECT_CONFIG_ERROR("plugins:\n  kv_quota_bytes: 65535\n", "plugins.kv_quota_bytes", 2);
  EXPECT_CONFIG_ERROR("plugins:\n  kv_quota_bytes: 1073741825\n", "plugins.kv_quota_bytes", 2);
  EXPECT_CONFIG_ERROR("plugins:\n  kv_quota_bytes: 1.5e6\n", "plugins.kv_quota_bytes", 2);
  EXPECT_CONFIG_ERROR("store:\n  sealing_key_file: \"\"\n", "store.sealing_key_file", 2);
  EXPECT_CONFIG_ERROR("store:\n  sealing_key_file: [a]\n", "store.sealing_key_file", 2);
}

TEST(Config, LogSection) {
  config c = parse_ok("log:\n  format: json\n  file: /var/log/xconn/xconnd.log\n  level: debug\n");
  EXPECT_EQ(c.log.format, "json");
  EXPECT_EQ(c.log.file, "/var/log/xconn/xconnd.log");
  EXPECT_EQ(c.log.level, "debug");
  for (const char* level : {"trace", "debug", "info", "warn", "error"})
    EXPECT_EQ(parse_ok(std::string("log: {level: ") + level + "}\n").log.level, level);
  EXPECT_EQ(parse_ok("log: {format: \"text\"}\n").log.format, "text");
  EXPECT_EQ(parse_ok("log:\n  file: \"\"\n").log.file, "");  // "": stderr
  EXPECT_EQ(parse_ok("log:\n").log.level, "info");             // an empty section: the defaults
  EXPECT_EQ(parse_ok("log: {}\n").log.format, "text");
  ::setenv("XCONN_TEST_LOG_FILE", "/tmp/from-env.log", 1);
  EXPECT_EQ(parse_ok("log:\n  file: ${XCONN_TEST_LOG_FILE}\n").log.file, "/tmp/from-env.log");
}

TEST(Config, LogSectionIsStrict) {
  EXPECT_CONFIG_ERROR("log:\n  format: json\n  colour: true\n", "log.colour", 3);
  EXPECT_CONFIG_ERROR("log:\n  level: info\n  level: debug\n", "log.level", 3);
  EXPECT_CONFIG_ERROR("log: {}\nlog: {}\n", "log", 2);
  EXPECT_CONFIG_ERROR("log: json\n", "log", 1);
  EXPECT_CONFIG_ERROR("log: [format, json]\n", "log", 1);
  EXPECT_CONFIG_ERROR("logs:\n  format: json\n", "logs", 1);
  // Wrong words, wrong case, near misses, other types.
  for (const char* bad : {"xml", "JSON", "Text", "\"\"", "\" json\"", "1", "true", "~", "[json]", "{a: b}", "text json"})
    EXPECT_CONFIG_ERROR(std::string("log:\n  format: ") + bad + "\n", "log.format", 2);
  for (const char* bad : {"warning", "WARN", "Info", "critical", "off", "err", "fatal", "\"\"", "0", "3", "~", "[info]",
                          "{level: info}", "info debug"})
    EXPECT_CONFIG_ERROR(std::string("log:\n  level: ") + bad + "\n", "log.level", 2);
  for (const char* bad : {"[a.log]", "{path: a.log}", "~", ""})
    EXPECT_CONFIG_ERROR(std::string("log:\n  file: ") + bad + "\n", "log.file", 2);
  // The message says what is allowed, never the value (a value may be a secret).
  auto err = parse_err(std::string("log:\n  format: ") + planted_secret + "\n");
  EXPECT_NE(err.message.find("text or json"), std::string::npos) << err.what();
  EXPECT_EQ(err.what().find(planted_secret), std::string::npos) << err.what();
  err = parse_err(std::string("log:\n  level: \"") + planted_secret + "\"\n");
  EXPECT_NE(err.message.find("trace, debug, info, warn or error"), std::string::npos) << err.what();
  EXPECT_EQ(err.what().find(planted_secret), std::string::npos) << err.what();
  // Hostile bytes and sizes are refused before the section is read, at the line they are on.
  EXPECT_CONFIG_ERROR("log:\n  file: \"a\x1b[2Jb.log\"\n", "", 2);
  EXPECT_CONFIG_ERROR("log:\n  file: \"a\xff.log\"\n", "", 2);
  EXPECT_CONFIG_ERROR(std::string("log:\n  file: \"a\0b\"\n", 20), "", 2);
  EXPECT_CONFIG_ERROR("log:\n  file: \"" + std::string(100 * 1024, 'f') + "\"\n", "", 2);
  EXPECT_CONFIG_ERROR("log:\n  format: &f json\n  level: *f\n", "", 2);
  EXPECT_CONFIG_ERROR("log:\n  file: ${XCONN_TEST_UNSET_LOG_FILE_VARIABLE}\n", "log.file", 2);
  // Control characters YAML escapes decode into are refused in a path too.
  EXPECT_CONFIG_ERROR("log:\n  file: \"a\\u001b[2Jb.log\"\n", "log.file", 2);
  EXPECT_CONFIG_ERROR("log:\n  file: \"a\\nb.log\"\n", "log.file", 2);
  EXPECT_CONFIG_ERROR("log:\n  file: \"a\\x7fb.log\"\n", "log.file", 2);
  // The file's folder is checked when the log is set up (log::configure), not when the file is parsed.
  EXPECT_EQ(parse_ok("log:\n  file: /no/such/folder/x.log\n").log.file, "/no/such/folder/x.log");
}

TEST(Config, SealingKeyFileDefaultsIntoTheStoreFolder) {
  auto in_store = parse_ok("store:\n  path: /var/lib/x\n");
  EXPECT_EQ(in_store.store.sealing_key_path(), "/var/lib/x/sealing_key");
  auto apart = parse_ok("store:\n  path: /var/lib/x\n  sealing_key_file: /etc/x/key\n");
  EXPECT_EQ(apart.store.sealing_key_path(), "/etc/x/key");
  EXPECT_EQ(parse_ok("plugins:\n  kv_quota_bytes: 65536\n").plugins.kv_quota_bytes, 65536u);
}

TEST(Config, Listen) {
  for (const char* good : {"127.0.0.1:8840", "0.0.0.0:0", "localhost:65535", "[::1]:8840", "[::]:0", "my-host.example:1"})
    EXPECT_EQ(parse_ok(std::string("server:\n  listen: \"") + good +
                       "\"\n  public_base_url: \"https://xconn.example\"\n")
                  .server.listen,
              good);
  // A wildcard address needs the URL the host is reached at.
  EXPECT_CONFIG_ERROR("server:\n  listen: \"0.0.0.0:8840\"\n", "server.public_base_url", 1);
  EXPECT_CONFIG_ERROR("server:\n  listen: \"[::]:8840\"\n", "server.public_base_url", 1);
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

// Every kind of YAML scalar and collection a connector group's config may hold; the tests name its lines.
const char* const connector_groups_yaml = R"(connectors:
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
)";

TEST(Config, ConnectorGroupsConvertToJson) {
  config c = parse_ok(connector_groups_yaml);
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

}  // namespace
}  // namespace xconn::test
