// Operating the real daemon (docs/operations.md): the YAML read again on SIGHUP and POST /admin/reload, a plugin's
// channels listed, and an online backup taken under inbound load and restored into a new store folder.
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/test_support.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <set>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string key = "xck_operations_key_0123456789abcdef";

std::map<std::string, std::string> with_key() { return {{"Authorization", "Bearer " + key}}; }

// echo's entry in GET /connectors.
json::object echo_entry(unsigned short port) {
  auto list = http_get(port, "/connectors", key).json();
  if (!list.is_object()) return {};
  for (const auto& c : list.at("connectors").as_array())
    if (c.at("plugin_id") == "echo") return c.as_object();
  return {};
}

std::int64_t generation_of(const json::object& entry) {
  return entry.contains("generation") ? entry.at("generation").as_int64() : -1;
}

// A daemon on echo with connectors.echo.config.sent_log_max set to sent_log_max (a YAML scalar, so tests can plant
// a bad one), and what it runs with.
struct reloadable_daemon {
  temp_dir dir;
  std::unique_ptr<daemon_process> d;
  unsigned short port = 0;

  void write_config(const std::string& sent_log_max, const std::string& heartbeat_s = "30") {
    auto text = test_daemon_config(plugin_dir(), "  watch: false\nconnectors:\n  echo:\n    config:\n      sent_log_max: " +
                                                     sent_log_max + "\n");
    // server.heartbeat_s comes first in the server section, so a changed value is a restart-only key.
    text.replace(text.find("server:\n") + 8, 0, "  heartbeat_s: " + heartbeat_s + "\n");
    write_file(dir.path() / "xconnd.yaml", text);
  }
  void start() { d = start_test_daemon(dir.path(), key, port); }
};

TEST(config_reload, sighup_reloads_a_changed_section_keeps_the_socket_and_skips_an_unchanged_one) {
  reloadable_daemon r;
  r.write_config("100");
  r.start();
  ASSERT_NE(r.port, 0);
  auto c = dp_client::connect(r.port, key);
  ASSERT_TRUE(c);
  auto before = echo_entry(r.port);
  auto digest = text_of(before, "config_digest");

  // Unchanged: nothing reloads.
  r.d->signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return r.d->console().find("config reload: reloading []") != std::string::npos; }))
      << r.d->console();
  EXPECT_EQ(generation_of(echo_entry(r.port)), generation_of(before));

  // Changed: a new generation with the new section, the socket stays.
  r.write_config("200");
  r.d->signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return generation_of(echo_entry(r.port)) > generation_of(before); }, 20s))
      << r.d->console();
  auto after = echo_entry(r.port);
  EXPECT_NE(text_of(after, "config_digest"), digest);
  EXPECT_EQ(after.at("last_reload").at("status"), "reloaded");
  EXPECT_FALSE(c->ws().closed());
  auto channel = c->open();
  EXPECT_FALSE(channel.empty()) << "the socket serves after the reload";
}

TEST(config_reload, an_invalid_section_keeps_the_old_one_serving_and_says_why) {
  reloadable_daemon r;
  r.write_config("100");
  r.start();
  ASSERT_NE(r.port, 0);
  auto before = echo_entry(r.port);
  r.write_config("0");  // echo takes 1..100000
  r.d->signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] {
    auto e = echo_entry(r.port);
    return e.contains("last_reload") && e.at("last_reload").is_object() &&
           e.at("last_reload").at("status") == "refused";
  }, 20s)) << r.d->console();
  auto after = echo_entry(r.port);
  EXPECT_EQ(generation_of(after), generation_of(before));
  EXPECT_EQ(text_of(after, "config_digest"), text_of(before, "config_digest"));
  auto reason = std::string(after.at("last_reload").at("reason").as_string());
  EXPECT_NE(reason.find("xconnd.yaml:"), std::string::npos) << reason;
  EXPECT_NE(reason.find("connectors.echo.config.sent_log_max"), std::string::npos) << reason;
  EXPECT_EQ(http_get(r.port, "/connectors/echo/health", key).status, 200);

  // Fixed again: it reloads (the refusal is not remembered against a changed section).
  r.write_config("300");
  r.d->signal(SIGHUP);
  EXPECT_TRUE(wait_until([&] { return generation_of(echo_entry(r.port)) > generation_of(before); }, 20s))
      << r.d->console();
}

TEST(config_reload, an_invalid_file_changes_nothing_and_restart_only_keys_are_reported) {
  reloadable_daemon r;
  r.write_config("100");
  r.start();
  ASSERT_NE(r.port, 0);
  auto before = echo_entry(r.port);

  write_file(r.dir.path() / "xconnd.yaml", "server: [\n");
  auto bad = http_call(r.port, "POST", "/admin/reload", with_key());
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_EQ(error_of(bad), "config_invalid");
  EXPECT_NE(bad.body.find("xconnd.yaml:"), std::string::npos) << bad.body;
  EXPECT_EQ(http_call(r.port, "POST", "/connectors/echo/reload", with_key()).status, 422);
  auto metrics = http_get(r.port, "/metrics", key).body;
  EXPECT_NE(metrics.find("xconn_config_last_reload_success 0"), std::string::npos);
  EXPECT_NE(metrics.find("xconn_config_reloads_total{outcome=\"invalid\"} 2"), std::string::npos);
  EXPECT_EQ(generation_of(echo_entry(r.port)), generation_of(before));

  r.write_config("100", "45");
  auto ok = http_call(r.port, "POST", "/admin/reload", with_key());
  ASSERT_EQ(ok.status, 200) << ok.body;
  auto body = ok.json().as_object();
  EXPECT_EQ(body.at("status"), "applied");
  EXPECT_EQ(body.at("restart_required"), json::array{"server.heartbeat_s"});
  EXPECT_EQ(body.at("reloading"), json::array{});
  EXPECT_NE(http_get(r.port, "/metrics", key).body.find("xconn_config_last_reload_success 1"), std::string::npos);
  EXPECT_TRUE(wait_until([&] {
    return r.d->console().find("server.heartbeat_s changed but apply only at the next start") != std::string::npos;
  })) << r.d->console();

  // POST {base}/reload reads the file too: the new section is taken.
  r.write_config("250", "45");
  auto one = http_call(r.port, "POST", "/connectors/echo/reload", with_key());
  EXPECT_EQ(one.status, 202) << one.body;
  EXPECT_TRUE(wait_until([&] {
    return generation_of(echo_entry(r.port)) > generation_of(before) &&
           text_of(echo_entry(r.port), "config_digest") != text_of(before, "config_digest");
  }, 20s)) << r.d->console();
  EXPECT_EQ(http_call(r.port, "POST", "/connectors/nosuch/reload", with_key()).status, 404);
}

TEST(channels_route, lists_a_plugins_channels_without_credentials) {
  server_fixture server;
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto signed_in = c->open_authenticated();
  auto plain = c->open();
  auto r = http_get(server.port(), "/connectors/echo/channels", server.key());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find(good_token), std::string::npos) << "a credential in the list";
  std::map<std::string, json::object> by_id;
  auto listed = r.json();
  for (const auto& ch : listed.at("channels").as_array())
    by_id[std::string(ch.at("connector_channel_id").as_string())] = ch.as_object();
  ASSERT_EQ(by_id.size(), 2u) << r.body;
  EXPECT_EQ(by_id[signed_in].at("authenticated"), true);
  EXPECT_EQ(by_id[signed_in].at("status"), "connected");
  EXPECT_EQ(by_id[plain].at("authenticated"), false);
  EXPECT_EQ(by_id[plain].at("routed"), true);
  EXPECT_EQ(text_of(by_id[plain], "connector_id"), c->connector_id());
  EXPECT_EQ(http_get(server.port(), "/connectors/echo/channels").status, 401);
  EXPECT_EQ(http_get(server.port(), "/connectors/nosuch/channels", server.key()).status, 404);
}

// echo_send_message (a side-effect tool) with this tool_call_id: the message_id of its result ("" on failure).
std::string send_by_tool(dp_client& c, const std::string& channel, const std::string& call) {
  auto ack = c.invoke(channel, "echo_send_message", {{"text", "by a tool"}}, {{"tool_call_id", call}});
  if (!ack || !error_code(*ack).empty()) return {};
  auto p = payload_of(*ack);
  return p.contains("result") && p["result"].is_object() ? text_of(p["result"].as_object(), "message_id") : "";
}

std::string inject(unsigned short port, const std::string& channel, const std::string& text, const std::string& msg_id) {
  auto r = http_call(port, "POST", "/connectors/echo/inject", with_key(),
                     json::serialize(json::object{{"connector_channel_id", channel}, {"text", text}, {"msg_id", msg_id}}));
  return r.status == 202 ? text_of(r.json().as_object(), "message_id") : std::string();
}

TEST(backup, taken_under_inbound_load_and_restored_it_holds_what_was_durable_and_nothing_acked) {
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", test_daemon_config(plugin_dir()));
  unsigned short port = 0;
  auto d = start_test_daemon(dir.path(), key, port);
  ASSERT_NE(port, 0);

  std::string acked_channel, loaded_channel, tool_channel, connector_id, file_ref, file_digest, sent_by_tool;
  std::vector<std::string> acked, unacked;
  {
    auto c = dp_client::connect(port, key);
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    acked_channel = c->open_authenticated();
    loaded_channel = c->open_authenticated();
    c->request("channel.close", {}, loaded_channel);  // its messages wait in the store
    // echo_send_message answers, then emits the peer's reply on its channel: that one is acked too.
    tool_channel = c->open_authenticated();
    sent_by_tool = send_by_tool(*c, tool_channel, "call_before_backup");
    ASSERT_FALSE(sent_by_tool.empty());
    auto reply = c->next_push("chat.message", tool_channel);
    ASSERT_TRUE(reply);
    c->send("chat.message.ack", {{"message_id", text_of(payload_of(*reply), "message_id")}, {"status", "accepted"}},
            tool_channel);

    auto data = random_bytes(300000);
    file_digest = sha256_of(data);
    auto headers = with_key();
    headers["X-XAgent-Connector-Channel-ID"] = acked_channel;
    headers["Content-Type"] = multipart_type();
    auto up = http_call(port, "POST", uploads, headers, multipart({file_part(data)}));
    ASSERT_EQ(up.status, 201) << up.body;
    file_ref = jstr(up.json().as_object(), "file_ref");

    for (int i = 0; i < 10; ++i) {
      auto id = inject(port, acked_channel, "m" + std::to_string(i), "a" + std::to_string(i));
      ASSERT_FALSE(id.empty());
      (i < 5 ? acked : unacked).push_back(id);
    }
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(c->next_push("chat.message", acked_channel));
    for (const auto& id : acked) c->send("chat.message.ack", {{"message_id", id}, {"status", "accepted"}}, acked_channel);
    // An ack is durable once the channel's pending count has dropped by it.
    ASSERT_TRUE(wait_until([&] {
      auto h = http_get(port, "/connectors/echo/health", key).json();
      return h.is_object() && h.at("inbound").at("pending").as_int64() == 5;
    }, 10s));
  }

  // Load: messages keep coming while the backup is taken. Those answered before it started must be in it.
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::vector<std::string> loaded_ids(4000);
  std::thread load([&] {
    auto until = std::chrono::steady_clock::now() + 20s;
    for (int i = 0; i < 4000 && !stop && std::chrono::steady_clock::now() < until; ++i) {
      auto id = inject(port, loaded_channel, "load " + std::to_string(i), "l" + std::to_string(i));
      if (id.empty()) break;
      loaded_ids[static_cast<std::size_t>(i)] = id;
      answered = i + 1;
    }
  });
  ASSERT_TRUE(wait_until([&] { return answered >= 50; }, 10s));
  int durable_before_backup = answered;
  auto backup = http_get(port, "/admin/backup", key);
  stop = true;
  load.join();
  ASSERT_EQ(backup.status, 200);
  EXPECT_EQ(backup.headers["content-type"], "application/octet-stream");
  ASSERT_GT(backup.body.size(), 4096u);
  EXPECT_EQ(http_get(port, "/admin/backup").status, 401);
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(), 0) << d->console();
  EXPECT_NE(d->console().find("backup: sent"), std::string::npos) << d->console();

  // Restore: the copy as data.mdb in a new folder, with the sealing key kept apart from it.
  temp_dir restored;
  std::filesystem::create_directories(restored.path() / "var" / "xconn");
  write_file(restored.path() / "var" / "xconn" / "data.mdb", backup.body);
  std::filesystem::copy_file(dir.path() / "var" / "xconn" / "sealing_key", restored.path() / "var" / "xconn" / "sealing_key");
  write_file(restored.path() / "xconnd.yaml", test_daemon_config(plugin_dir()));
  auto again = start_test_daemon(restored.path(), key, port);
  ASSERT_NE(port, 0);

  auto c = dp_client::connect(port, key, "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(acked_channel));
  std::vector<std::string> redelivered;
  while (auto m = c->next_push("chat.message", acked_channel, redelivered.size() < unacked.size() ? 5000ms : 1000ms))
    redelivered.push_back(text_of(payload_of(*m), "message_id"));
  EXPECT_EQ(redelivered, unacked) << "every unacked message back, no acked one";

  ASSERT_TRUE(c->open_channel(loaded_channel));
  std::set<std::string> waiting;
  auto until = std::chrono::steady_clock::now() + 30s;
  std::size_t missing = durable_before_backup;
  while (missing > 0 && std::chrono::steady_clock::now() < until) {
    auto m = c->next_push("chat.message", loaded_channel, 2000ms);
    if (!m) break;
    auto id = text_of(payload_of(*m), "message_id");
    waiting.insert(id);
    c->send("chat.message.ack", {{"message_id", id}, {"status", "accepted"}}, loaded_channel);
    missing = 0;
    for (int i = 0; i < durable_before_backup; ++i) missing += !waiting.contains(loaded_ids[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(missing, 0u) << "of " << durable_before_backup << " messages answered before the backup began";

  // The tool call's idempotency record came back: its repeat answers the recorded result without sending again.
  ASSERT_TRUE(c->open_channel(tool_channel));
  EXPECT_EQ(send_by_tool(*c, tool_channel, "call_before_backup"), sent_by_tool);
  // The msg_id window (the idempotency record of an emit) came back too, and so did the file, byte for byte.
  auto dup = http_call(port, "POST", "/connectors/echo/inject", with_key(),
                       json::serialize(json::object{{"connector_channel_id", acked_channel}, {"text", "m0"}, {"msg_id", "a0"}}));
  EXPECT_EQ(dup.json().at("duplicate"), json::value(true)) << dup.body;
  auto file = http_get(port, refs(file_ref), key);
  ASSERT_EQ(file.status, 200);
  EXPECT_EQ(sha256_of(file.body), file_digest);
}

}  // namespace
}  // namespace xconn::test

namespace xconn::test {
namespace {

TEST(daemon_log, json_lines_to_a_file_reopened_on_sigusr1_after_a_rotation) {
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml",
             test_daemon_config(plugin_dir(), "log:\n  format: json\n  file: \"xconnd.log\"\n"));
  auto d = std::make_unique<daemon_process>(std::vector<std::string>{"--config", "xconnd.yaml"}, dir.path(),
                                            std::map<std::string, std::string>{{"XCONN_TEST_KEY", key}});
  auto log = dir.path() / "xconnd.log";
  auto has = [](const std::filesystem::path& p, const std::string& text) {
    return std::filesystem::exists(p) && read_file(p).find(text) != std::string::npos;
  };
  ASSERT_TRUE(wait_until([&] { return has(log, "listening on"); }, 20s)) << d->console();
  std::filesystem::rename(log, dir.path() / "xconnd.log.1");
  d->signal(SIGUSR1);
  ASSERT_TRUE(wait_until([&] { return has(log, "log file reopened"); }, 20s)) << d->console();
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(), 0);
  for (const auto& file : {dir.path() / "xconnd.log.1", log}) {
    auto text = read_file(file);
    std::size_t lines = 0;
    for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1, ++lines) {
      auto line = json::parse(text.substr(at, end - at));
      EXPECT_TRUE(line.is_object() && line.as_object().contains("msg")) << text.substr(at, end - at);
    }
    EXPECT_GT(lines, 0u) << file;
    EXPECT_EQ(text.find(key), std::string::npos) << "the key reached the log";
  }
  EXPECT_TRUE(has(dir.path() / "xconnd.log.1", "listening on"));
  EXPECT_TRUE(has(log, "stopped"));
}

}  // namespace
}  // namespace xconn::test
