// AIOS events on the real server (, docs/protocol.md "Events"): GET {base}/events pages, the long
// poll, each kind of record at its moment, metadata only (a planted text never appears), seq past a restart, and
// the parameters' errors.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <future>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string planted_text = "planted-transcript-4c1e";

json::object events_page(unsigned short port, const std::string& key, const std::string& query,
                         const std::string& plugin = "echo") {
  auto r = http_get(port, "/connectors/" + plugin + "/events" + query, key);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find(planted_text), std::string::npos) << r.body;
  auto v = r.json();
  return v.is_object() ? v.as_object() : json::object{};
}

std::vector<json::object> events_of(const json::object& page) {
  std::vector<json::object> out;
  if (auto* e = page.if_contains("events"); e && e->is_array())
    for (const auto& x : e->as_array()) out.push_back(x.as_object());
  return out;
}

// The events of type (and of session, when given), in order.
std::vector<json::object> of_type(const std::vector<json::object>& events, const std::string& type,
                                  const std::string& session = "") {
  std::vector<json::object> out;
  for (const auto& e : events)
    if (text_of(e, "event_type") == type && (session.empty() || text_of(e, "session_id") == session)) out.push_back(e);
  return out;
}

// Every event of the plugin, waited for until pred holds on them (or 5 s).
std::vector<json::object> events_until(server_fixture& server, const std::string& plugin,
                                       const std::function<bool(const std::vector<json::object>&)>& pred) {
  std::vector<json::object> all;
  auto until = std::chrono::steady_clock::now() + 5s;
  do {
    all = events_of(events_page(server.port(), server.key(), "?limit=1000", plugin));
    if (pred(all)) break;
    std::this_thread::sleep_for(20ms);
  } while (std::chrono::steady_clock::now() < until);
  return all;
}

std::string payload_text(const json::object& event, const char* key) {
  return text_of(event.at("payload").as_object(), key);
}

TEST(events, a_load_a_sign_in_and_messages_in_and_out_are_recorded_with_metadata_only) {
  server_fixture server({"echo.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  ASSERT_FALSE(channel.empty());
  auto r = http_call(server.port(), "POST", "/connectors/echo/inject", {{"Authorization", "Bearer " + server.key()}},
                     json::serialize(json::object{{"connector_channel_id", channel}, {"text", planted_text}}));
  ASSERT_EQ(r.status, 202) << r.body;
  auto pushed = c->next_push("chat.message", channel);
  ASSERT_TRUE(pushed);
  auto inbound_id = text_of(payload_of(*pushed), "message_id");
  auto final_ack = c->request("chat.message", {{"message_id", "out-1"}, {"text", planted_text}}, channel);
  ASSERT_TRUE(final_ack);

  auto all = events_until(server, "echo", [](const auto& e) { return of_type(e, "message").size() >= 2; });
  ASSERT_FALSE(all.empty());
  // Every event has the common fields, seq increasing.
  std::uint64_t last_seq = 0;
  for (const auto& e : all) {
    auto seq = e.at("seq").to_number<std::uint64_t>();
    EXPECT_GT(seq, last_seq);
    last_seq = seq;
    EXPECT_EQ(text_of(e, "channel_type"), "dialog");
    EXPECT_EQ(text_of(e, "target"), "echo");
    EXPECT_EQ(text_of(e, "timestamp").size(), 24u) << text_of(e, "timestamp");  // 2026-12-06T04:28:08.123Z
    EXPECT_TRUE(e.at("payload").is_object());
  }
  auto loaded = of_type(all, "AdapterLoaded");
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(text_of(all.front(), "event_type"), "AdapterLoaded");
  EXPECT_EQ(payload_text(loaded[0], "config_digest").size(), 64u);
  EXPECT_TRUE(loaded[0].at("payload").as_object().at("generation").is_number());
  EXPECT_FALSE(loaded[0].contains("session_id"));

  auto changes = of_type(all, "ChannelStatusChanged", channel);
  ASSERT_GE(changes.size(), 2u);
  EXPECT_EQ(payload_text(changes.front(), "previous_status"), "created");
  EXPECT_EQ(payload_text(changes.front(), "status"), "authenticating");
  EXPECT_EQ(payload_text(changes.back(), "status"), "connected");
  EXPECT_EQ(payload_text(changes.back(), "reason"), "signed_in");

  auto messages = of_type(all, "message", channel);
  ASSERT_EQ(messages.size(), 2u);
  const auto& in = messages[0].at("payload").as_object();
  EXPECT_EQ(text_of(in, "direction"), "inbound");
  EXPECT_EQ(in.at("bytes").to_number<std::size_t>(), planted_text.size());
  EXPECT_EQ(text_of(messages[0], "message_id"), inbound_id);
  EXPECT_EQ(text_of(messages[0], "correlation_id"), inbound_id);
  const auto& out = messages[1].at("payload").as_object();
  EXPECT_EQ(text_of(out, "direction"), "outbound");
  EXPECT_EQ(text_of(out, "outcome"), "accepted");
  EXPECT_EQ(text_of(messages[1], "message_id"), "out-1");
}

TEST(events, pages_follow_after_and_limit_and_next_after) {
  server_fixture server({"echo.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(c->open_authenticated().empty());
  auto all = events_until(server, "echo", [](const auto& e) { return of_type(e, "ChannelStatusChanged").size() >= 6; });
  ASSERT_GE(all.size(), 7u);
  auto first_seq = all[0].at("seq").to_number<std::uint64_t>();

  auto page = events_page(server.port(), server.key(), "?after=" + std::to_string(first_seq) + "&limit=2");
  auto two = events_of(page);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(json::serialize(two[0]), json::serialize(all[1]));  // after is exclusive
  EXPECT_EQ(page.at("next_after").to_number<std::uint64_t>(), two[1].at("seq").to_number<std::uint64_t>());
  // Past the last: nothing, and next_after stays where it was asked.
  auto last_seq = all.back().at("seq").to_number<std::uint64_t>();
  auto empty = events_page(server.port(), server.key(), "?after=" + std::to_string(last_seq + 50));
  EXPECT_TRUE(events_of(empty).empty());
  EXPECT_EQ(empty.at("next_after").to_number<std::uint64_t>(), last_seq + 50);
  // The default limit is 100, and everything is there.
  EXPECT_EQ(events_of(events_page(server.port(), server.key(), "")).size(), all.size());
}

TEST(events, a_long_poll_answers_when_an_event_arrives_and_an_idle_one_when_its_wait_ends) {
  server_fixture server({"echo.so"});
  server.start();
  auto all = events_until(server, "echo", [](const auto& e) { return !e.empty(); });
  ASSERT_FALSE(all.empty());
  auto last = std::to_string(all.back().at("seq").to_number<std::uint64_t>());

  auto idle = events_page(server.port(), server.key(), "?after=" + last + "&wait=1");
  EXPECT_TRUE(events_of(idle).empty());
  EXPECT_EQ(std::to_string(idle.at("next_after").to_number<std::uint64_t>()), last);

  auto started = std::chrono::steady_clock::now();
  auto waiting = std::async(std::launch::async,
                            [&] { return events_page(server.port(), server.key(), "?after=" + last + "&wait=30"); });
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  auto page = waiting.get();
  // Answered by the event, not by the end of its wait.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 25s);
  auto got = events_of(page);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(text_of(got[0], "event_type"), "ChannelStatusChanged");
}

TEST(events, seq_goes_on_past_a_restart_and_a_plugins_status_reports_are_recorded) {
  server_fixture server({"ledger.so"});
  server.start();
  std::uint64_t before = 0;
  {
    auto c = dp_client::connect(server.port(), server.key(), "ledger");
    ASSERT_TRUE(c);
    auto channel = c->open();
    ASSERT_TRUE(c->auth_start(channel, "ledger_token", json::object{{"token", "ledger-token-1"}}));
    auto ack = c->invoke(channel, "ledger_status", {{"status", "revoked"}});
    ASSERT_TRUE(ack && error_code(*ack).empty());
    auto all = events_until(server, "ledger", [&](const auto& e) {
      auto changes = of_type(e, "ChannelStatusChanged", channel);
      return !changes.empty() && payload_text(changes.back(), "status") == "revoked";
    });
    auto reports = of_type(all, "status", channel);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(payload_text(reports[0], "status"), "revoked");
    EXPECT_EQ(payload_text(reports[0], "direction"), "inbound");
    auto changes = of_type(all, "ChannelStatusChanged", channel);
    EXPECT_EQ(payload_text(changes.back(), "previous_status"), "connected");
    EXPECT_EQ(payload_text(changes.back(), "reason"), "plugin_report");
    before = all.back().at("seq").to_number<std::uint64_t>();
  }
  server.stop();
  server.start();
  auto all = events_until(server, "ledger", [](const auto& e) { return !of_type(e, "AdapterLoaded").empty(); });
  ASSERT_FALSE(all.empty());
  EXPECT_GT(all.front().at("seq").to_number<std::uint64_t>(), before);
  // A tail that asks from where it stopped sees the new run's events.
  EXPECT_FALSE(events_of(events_page(server.port(), server.key(), "?after=" + std::to_string(before), "ledger")).empty());
}

TEST(events, bad_parameters_are_refused_naming_the_parameter_and_the_key_is_needed) {
  server_fixture server({"echo.so"});
  server.start();
  for (const auto& [query, name] : std::vector<std::pair<std::string, std::string>>{
           {"?after=abc", "after"}, {"?after=-1", "after"}, {"?after=", "after"},
           {"?after=99999999999999999999999", "after"}, {"?limit=0", "limit"}, {"?limit=1001", "limit"},
           {"?limit=1e3", "limit"}, {"?wait=31", "wait"}, {"?wait=%33", "wait"}, {"?after=1&limit=", "limit"}}) {
    auto r = http_get(server.port(), "/connectors/echo/events" + query, server.key());
    EXPECT_EQ(r.status, 400) << query;
    auto v = r.json();
    ASSERT_TRUE(v.is_object()) << r.body;
    EXPECT_EQ(json::value_to<std::string>(v.at("error").at("code")), "invalid_request");
    EXPECT_EQ(json::value_to<std::string>(v.at("error").at("message")).rfind(name, 0), 0u) << query << " " << r.body;
  }
  EXPECT_EQ(http_get(server.port(), "/connectors/echo/events").status, 401);
  EXPECT_EQ(http_get(server.port(), "/connectors/nope/events", server.key()).status, 404);
}

}  // namespace
}  // namespace xconn::test
