// A plugin's own durable state (plugin.h xconn_host_kv_*, xconn_host_emit_with; docs/plugin-api.md "State"), driven
// through the fixture plugin ledger: its cursor and notes survive a restart and a kill -9, the cursor moves exactly
// with the messages it produced, and the quota refuses with a clear code.
#include "support/daemon_process.hpp"
#include "support/log_capture.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

// A channel signed in to ledger; "" on failure.
std::string ledger_channel(dp_client& c) { return c.open_signed_in("ledger_token", {{"token", "ledger-token-1"}}); }

http_reply feed(unsigned short port, const std::string& key, const std::string& channel, json::array lines) {
  return http_call(port, "POST", "/connectors/ledger/feed", {{"Authorization", "Bearer " + key}},
                   json::serialize(json::object{{"connector_channel_id", channel}, {"lines", std::move(lines)}}));
}

// ledger_state's result: {"cursor", "notes"}, or an empty object when the call failed.
json::object ledger_state(dp_client& c, const std::string& channel) {
  auto ack = c.invoke(channel, "ledger_state", {});
  EXPECT_TRUE(ack && error_code(*ack).empty()) << (ack ? json::serialize(*ack) : "no answer");
  if (!ack || !error_code(*ack).empty()) return {};
  return payload_of(*ack)["result"].as_object();
}

// Reads up to count chat.message pushes on channel (acking each), each waited for up to deadline; their texts.
std::vector<std::string> read_messages(dp_client& c, const std::string& channel, int count,
                                       std::map<std::string, std::string>* by_id = nullptr,
                                       std::chrono::milliseconds deadline = 5s) {
  std::vector<std::string> texts;
  for (int i = 0; i < count; ++i) {
    auto m = c.next_push("chat.message", channel, deadline);
    if (!m) break;
    auto message_id = text_of(payload_of(*m), "message_id");
    c.send("chat.message.ack", {{"message_id", message_id}, {"status", "accepted"}}, channel);
    bool redelivered = by_id && !by_id->emplace(message_id, text_of(payload_of(*m), "text")).second;
    if (!redelivered) texts.push_back(text_of(payload_of(*m), "text"));
  }
  return texts;
}

TEST(plugin_state, the_cursor_and_notes_survive_a_restart_and_the_cursor_moves_with_its_messages) {
  server_fixture server({"ledger.so"});
  server.start();
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(server.port(), server.key(), "ledger");
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = ledger_channel(*c);
    auto r = feed(server.port(), server.key(), channel, {"one", "two", "three"});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json().at("cursor"), 3);
    EXPECT_EQ(read_messages(*c, channel, 3), (std::vector<std::string>{"one", "two", "three"}));
    auto note = c->invoke(channel, "ledger_note", {{"key", "topic"}, {"value", "kept across restarts"}});
    ASSERT_TRUE(note && error_code(*note).empty()) << (note ? json::serialize(*note) : "no answer");
  }
  server.stop();
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "ledger", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  auto state = ledger_state(*c, channel);
  EXPECT_EQ(state["cursor"], 3);
  EXPECT_EQ(state["notes"], (json::object{{"topic", "kept across restarts"}}));
  auto r = feed(server.port(), server.key(), channel, {"four"});
  EXPECT_EQ(r.json().at("cursor"), 4) << r.body;
  EXPECT_EQ(read_messages(*c, channel, 1), std::vector<std::string>{"four"});
  EXPECT_FALSE(c->next_push("chat.message", channel, 200ms));
}

TEST(plugin_state, writes_past_the_quota_or_the_value_limit_are_refused_with_a_code) {
  server_fixture server({"ledger.so"}, [](config& cfg) { cfg.plugins.kv_quota_bytes = 100'000; });
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "ledger");
  ASSERT_TRUE(c);
  auto channel = ledger_channel(*c);
  auto note = [&](const std::string& key, std::size_t bytes) {
    auto ack = c->invoke(channel, "ledger_note", {{"key", key}, {"value", std::string(bytes, 'n')}});
    return ack ? error_code(*ack) : std::string("no answer");
  };
  EXPECT_EQ(note("a", 60'000), "");
  EXPECT_EQ(note("b", 60'000), "kv_quota_exceeded");
  EXPECT_EQ(note("c", 70'000), "invalid_argument");
  EXPECT_EQ(note("a", 10), "");  // shrinking is always allowed
  EXPECT_EQ(note("b", 60'000), "");
  auto notes = ledger_state(*c, channel)["notes"].as_object();
  EXPECT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes["a"], "nnnnnnnnnn");
}

// What the channel's descriptor says: its status and each tool's status and permission, "tool=status/permission".
std::pair<std::string, std::vector<std::string>> descriptor_summary(const json::object& descriptor) {
  std::vector<std::string> tools;
  for (const auto& t : descriptor.at("tools").as_array())
    tools.push_back(text_of(t.as_object(), "tool_id") + "=" + text_of(t.as_object(), "status") + "/" +
                    text_of(t.as_object(), "target_permission_state"));
  return {text_of(descriptor.at("connection").as_object(), "status"), tools};
}

// Hot reloads while lines are fed: the channel comes back verified with its sealed credential, and every line fed is
// delivered once, in order, with the cursor exactly past the last one (a feed the reload refused leaves no trace).
TEST(plugin_state, hot_reloads_under_traffic_keep_the_credential_and_neither_repeat_nor_skip_a_line) {
  server_fixture server({"ledger.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "ledger");
  ASSERT_TRUE(c);
  auto channel = ledger_channel(*c);
  auto generation = [&] {
    auto list = http_get(server.port(), "/connectors", server.key()).json();
    return list.at("connectors").as_array().at(0).at("generation").to_number<int>();
  };
  std::vector<std::string> fed;  // lines whose feed was answered 200, in order
  std::atomic<bool> feeding{true};
  std::thread feeder([&] {
    for (int i = 1; i <= 400 && feeding; ++i) {
      auto line = "L" + std::to_string(i);
      if (feed(server.port(), server.key(), channel, {line}).status == 200) fed.push_back(line);
    }
  });
  std::map<std::string, std::string> by_id;
  std::vector<std::string> received;
  for (int reload = 1; reload <= 2; ++reload) {
    auto before = generation();
    ASSERT_EQ(http_call(server.port(), "POST", "/connectors/ledger/reload", {{"Authorization", "Bearer " + server.key()}}).status, 202);
    ASSERT_TRUE(wait_until([&] {
      for (auto& t : read_messages(*c, channel, 50, &by_id, 20ms)) received.push_back(t);
      return generation() > before;
    }, 20s));
  }
  feeding = false;
  feeder.join();
  // The new build verified the channel with its credential.
  EXPECT_TRUE(wait_until([&] {
    auto d = c->get_descriptor(channel);
    return d && descriptor_summary(descriptor_in(*d)).first == "connected";
  }));
  auto state = ledger_state(*c, channel);
  EXPECT_EQ(state["restored_with"], "**-1");
  EXPECT_TRUE(wait_until([&] {
    for (auto& t : read_messages(*c, channel, 100, &by_id, 50ms)) received.push_back(t);
    return received.size() >= fed.size();
  }));
  // Every line answered 200 arrived; nothing arrived twice or out of order; the cursor counts what was delivered.
  std::vector<int> numbers;
  for (const auto& t : received) numbers.push_back(std::stoi(t.substr(1)));
  EXPECT_TRUE(std::is_sorted(numbers.begin(), numbers.end()) &&
              std::adjacent_find(numbers.begin(), numbers.end()) == numbers.end())
      << json::serialize(json::value_from(received));
  for (const auto& line : fed) EXPECT_NE(std::find(received.begin(), received.end(), line), received.end()) << line;
  EXPECT_EQ(ledger_state(*c, channel)["cursor"].to_number<std::size_t>(), received.size());
  EXPECT_GT(fed.size(), 0u);
}

TEST(plugin_state, a_reported_status_is_pushed_kept_across_a_restart_and_cleared_by_a_new_sign_in) {
  server_fixture server({"ledger.so"});
  server.start();
  std::string channel, connector_id;
  const std::vector<std::string> lost{"ledger_state=requires_reauth/requires_reauth",
                                      "ledger_note=requires_reauth/requires_reauth",
                                      "ledger_status=requires_reauth/requires_reauth"};
  {
    auto c = dp_client::connect(server.port(), server.key(), "ledger");
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = ledger_channel(*c);
    ASSERT_TRUE(c->next_push("connection.descriptor.push", channel));  // the sign-in's
    // A status the plugin may not give is refused, and nothing changes.
    auto ack = c->invoke(channel, "ledger_status", {{"status", "created"}});
    ASSERT_TRUE(ack);
    EXPECT_EQ(error_code(*ack), "status_refused");
    ack = c->invoke(channel, "ledger_status", {{"status", "revoked"}});
    ASSERT_TRUE(ack && error_code(*ack).empty()) << (ack ? json::serialize(*ack) : "no answer");
    auto push = c->next_push("connection.descriptor.push", channel);
    ASSERT_TRUE(push);
    EXPECT_EQ(descriptor_summary(descriptor_in(*push)), std::make_pair(std::string("revoked"), lost));
    // Its tools are not available any more: the host refuses them without asking the plugin.
    ack = c->invoke(channel, "ledger_state", {});
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->at("type"), "error") << json::serialize(*ack);
    EXPECT_EQ(error_code(*ack), "connection_not_authenticated");
  }
  server.stop();
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "ledger", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  auto get = c->get_descriptor(channel);
  ASSERT_TRUE(get);
  EXPECT_EQ(descriptor_summary(descriptor_in(*get)).first, "revoked");
  // Signing in again starts from the new binding.
  auto ack = c->auth_start(channel, "ledger_token", json::object{{"token", "ledger-token-2"}});
  ASSERT_TRUE(ack && error_code(*ack).empty());
  get = c->get_descriptor(channel);
  ASSERT_TRUE(get);
  EXPECT_EQ(descriptor_summary(descriptor_in(*get)).first, "connected");
  EXPECT_EQ(descriptor_summary(descriptor_in(*get)).second[0], "ledger_state=available/granted");
}

// After a restart the plugin gets each signed-in channel back with its sealed credential and verifies it: the
// channel shows authenticating (its tools unavailable) until the plugin answers, then what the plugin said.
TEST(plugin_state, restored_channels_are_verified_with_their_sealed_credentials_before_they_show_connected) {
  log_capture logs;
  std::optional<server_fixture> holder(std::in_place, std::vector<std::string>{"ledger.so"});
  auto& server = *holder;
  server.start();
  std::string slow, revoked, connector_id;
  const std::string planted = "slow-planted-secret-A1";
  {
    auto c = dp_client::connect(server.port(), server.key(), "ledger");
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    slow = c->open();
    ASSERT_TRUE(c->auth_start(slow, "ledger_token", json::object{{"token", planted}}));
    revoked = c->open();
    ASSERT_TRUE(c->auth_start(revoked, "ledger_token", json::object{{"token", "revoked-by-target-9"}}));
    auto state = ledger_state(*c, slow);
    EXPECT_EQ(state["restored_with"], "");  // nothing restored yet
  }
  server.stop();
  // The credential is in the store only sealed.
  auto store_bytes = read_file(server.dir().path() / "store" / "data.mdb");
  ASSERT_FALSE(store_bytes.empty());
  EXPECT_EQ(store_bytes.find(planted), std::string::npos);
  EXPECT_EQ(store_bytes.find("revoked-by-target-9"), std::string::npos);

  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "ledger", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(slow));
  ASSERT_TRUE(c->open_channel(revoked));
  auto get = c->get_descriptor(slow);
  ASSERT_TRUE(get);
  EXPECT_EQ(descriptor_summary(descriptor_in(*get)).first, "authenticating");
  auto early = c->invoke(slow, "ledger_state", {});
  ASSERT_TRUE(early);
  EXPECT_EQ(error_code(*early), "connector_channel_unavailable");
  EXPECT_EQ(last_pushed_status(*c, slow, "connected", 5s), "connected");
  EXPECT_EQ(ledger_state(*c, slow)["restored_with"], "**A1");  // the plugin had the right credential back
  // Refused at once, maybe before the socket opened the channel: read, not waited for as a push.
  EXPECT_TRUE(wait_until([&] {
    auto d = c->get_descriptor(revoked);
    return d && descriptor_summary(descriptor_in(*d)).first == "revoked";
  }));
  for (const auto& text : c->received()) EXPECT_EQ(text.find(planted), std::string::npos) << text;
  auto metrics = http_get(server.port(), "/metrics", server.key());
  EXPECT_EQ(metrics.body.find(planted), std::string::npos);
  auto events = http_get(server.port(), "/connectors/ledger/events?limit=1000", server.key());
  EXPECT_EQ(events.status, 200);
  EXPECT_EQ(events.body.find(planted), std::string::npos);
  EXPECT_EQ(events.body.find("revoked-by-target-9"), std::string::npos);
  c.reset();
  holder.reset();
  auto logged = logs.text();
  EXPECT_FALSE(logged.empty()) << "the capture is not working";
  EXPECT_EQ(logged.find(planted), std::string::npos) << logged;
  EXPECT_EQ(logged.find("revoked-by-target-9"), std::string::npos) << logged;
}

// The real daemon is killed with SIGKILL while the plugin reads a feed: whatever the moment, the messages that were
// stored are exactly the lines before the stored cursor, once each and in order.
TEST(plugin_state_kill9, a_kill_9_during_a_feed_neither_loses_nor_repeats_a_line) {
  const std::string key = "xck_ledger_key_0123456789abcdef";
  temp_dir dir;
  write_file(dir.path() / "xconnd.yaml", test_daemon_config(fixture_plugin_dir(), "  allow: [ledger]\n"));
  auto start = [&](unsigned short& port) { return start_test_daemon(dir.path(), key, port); };
  unsigned short port = 0;
  auto d = start(port);
  ASSERT_NE(port, 0);
  constexpr int lines = 400;
  std::string channel, connector_id;
  std::vector<std::string> delivered;      // texts in order of first delivery
  std::map<std::string, std::string> by_id;  // message_id -> text
  {
    auto c = dp_client::connect(port, key, "ledger");
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = ledger_channel(*c);
    json::array feed_lines;
    for (int i = 1; i <= lines; ++i) feed_lines.push_back(json::string("line " + std::to_string(i)));
    std::thread feeder([&, feed_lines] { feed(port, key, channel, feed_lines); });
    // Killed once the feed is well under way (50 messages delivered and acked), not at a fixed time.
    delivered = read_messages(*c, channel, 50, &by_id, 10s);
    EXPECT_EQ(delivered.size(), 50u);
    d->signal(SIGKILL);
    feeder.join();
  }
  ASSERT_EQ(d->wait_exit(), 128 + SIGKILL);
  d = start(port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, key, "ledger", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  auto cursor = ledger_state(*c, channel)["cursor"].to_number<int>();
  RecordProperty("cursor_at_kill", cursor);
  // Delivery is at least once (an ack may not have been stored), so a message seen before is counted once.
  auto rest = read_messages(*c, channel, lines, &by_id, 1s);
  delivered.insert(delivered.end(), rest.begin(), rest.end());
  ASSERT_EQ(delivered.size(), static_cast<std::size_t>(cursor));
  for (int i = 0; i < cursor; ++i) EXPECT_EQ(delivered[i], "line " + std::to_string(i + 1));
  // The feed goes on from the cursor: the next line is the next one.
  auto r = feed(port, key, channel, {"after"});
  EXPECT_EQ(r.json().at("cursor"), cursor + 1) << r.body;
}

// echo built against the 1.2 headers as git history has them: its smaller plugin table loads on this host, its
// signed-in channels show connected without a restore hook, and its tools and emits work.
TEST(plugin_abi, a_plugin_built_against_the_1_2_headers_serves_on_this_host) {
  server_fixture server(std::vector<std::string>{});
  std::filesystem::copy_file(fixture_plugin_dir() / "echo-abi-1.2" / "echo.so",
                             std::filesystem::path(server.cfg().plugins.dir) / "echo.so");
  server.start();
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
    auto ack = c->invoke(channel, "echo_reverse", {{"text", "abc"}});
    ASSERT_TRUE(ack && error_code(*ack).empty());
    EXPECT_EQ(payload_of(*ack)["result"].as_object()["text"], "cba");
  }
  server.stop();
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  auto get = c->get_descriptor(channel);
  ASSERT_TRUE(get);
  EXPECT_EQ(descriptor_summary(descriptor_in(*get)).first, "connected");
  auto r = http_call(server.port(), "POST", "/connectors/echo/inject", {{"Authorization", "Bearer " + server.key()}},
                     json::serialize(json::object{{"connector_channel_id", channel}, {"text", "from 1.2"}}));
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(read_messages(*c, channel, 1), std::vector<std::string>{"from 1.2"});
}

}  // namespace
}  // namespace xconn::test
