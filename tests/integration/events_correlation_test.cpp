// What each /events record names as its cause (docs/protocol.md "Events"), on the real server with a real client
// reading GET {base}/events: every record has a correlation_id (the packet, the auth session, the final's packet_id,
// or a fresh cor_ id), and a signed-in channel with no open socket still gets its ChannelStatusChanged when the
// plugin's health changes.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

std::vector<json::object> all_events(server_fixture& server, const std::string& plugin) {
  auto r = http_get(server.port(), "/connectors/" + plugin + "/events?limit=1000", server.key());
  EXPECT_EQ(r.status, 200) << r.body;
  std::vector<json::object> out;
  auto v = r.json();
  if (v.is_object())
    for (const auto& e : v.as_object().at("events").as_array()) out.push_back(e.as_object());
  return out;
}

// The plugin's events once pred holds on them (or after 5 s, as they are then).
std::vector<json::object> events_when(server_fixture& server, const std::string& plugin,
                                      const std::function<bool(const std::vector<json::object>&)>& pred) {
  auto until = std::chrono::steady_clock::now() + 5s;
  auto all = all_events(server, plugin);
  while (!pred(all) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
    all = all_events(server, plugin);
  }
  return all;
}

std::string reason_of(const json::object& e) { return text_of(e.at("payload").as_object(), "reason"); }

// The first ChannelStatusChanged of the channel with that reason; an empty object when there is none.
json::object change(const std::vector<json::object>& all, const std::string& channel, const std::string& reason) {
  for (const auto& e : all)
    if (text_of(e, "event_type") == "ChannelStatusChanged" && text_of(e, "session_id") == channel &&
        reason_of(e) == reason)
      return e;
  return {};
}

TEST(events_correlation, every_record_names_its_cause_the_packet_the_auth_session_or_a_fresh_id) {
  server_fixture server({"echo.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open();
  ASSERT_FALSE(channel.empty());
  auto start = c->send("auth.start", {{"flow_id", "echo_token"}, {"input", {{"token", good_token}}}}, channel);
  auto started = c->answer(start);
  ASSERT_TRUE(started);
  ASSERT_EQ(text_of(payload_of(*started), "status"), "authenticated");
  auto auth_session = text_of(payload_of(*started), "auth_session_id");
  ASSERT_FALSE(auth_session.empty());
  auto logout = c->send("auth.logout", {}, channel);
  ASSERT_TRUE(c->answer(logout));

  auto all = events_when(server, "echo", [&](const auto& e) { return !change(e, channel, "signed_out").empty(); });
  ASSERT_FALSE(all.empty());
  for (const auto& e : all) EXPECT_FALSE(text_of(e, "correlation_id").empty()) << json::serialize(e);

  // A load has no cause outside the host: a fresh id of its own.
  EXPECT_EQ(text_of(all.front(), "event_type"), "AdapterLoaded");
  EXPECT_TRUE(text_of(all.front(), "correlation_id").starts_with("cor_")) << json::serialize(all.front());
  // What the auth.start packet changed at once is its doing; the sign-in the run brought is the auth session's.
  auto auth_started = change(all, channel, "auth_started");
  ASSERT_FALSE(auth_started.empty());
  EXPECT_EQ(text_of(auth_started, "correlation_id"), text_of(start, "packet_id"));
  auto signed_in = change(all, channel, "signed_in");
  ASSERT_FALSE(signed_in.empty());
  EXPECT_EQ(text_of(signed_in, "correlation_id"), auth_session);
  EXPECT_EQ(text_of(change(all, channel, "signed_out"), "correlation_id"), text_of(logout, "packet_id"));
}

TEST(events_correlation, an_outbound_message_names_xagents_message_id_and_the_finals_packet_id) {
  server_fixture server({"echo.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  ASSERT_FALSE(channel.empty());
  auto final_packet = c->send("chat.message", {{"message_id", "out-corr-1"}, {"text", "hello"}}, channel);
  ASSERT_TRUE(c->answer(final_packet));

  auto outbound = [&](const std::vector<json::object>& all) {
    for (const auto& e : all)
      if (text_of(e, "event_type") == "message" && text_of(e.at("payload").as_object(), "direction") == "outbound")
        return e;
    return json::object{};
  };
  auto record = outbound(events_when(server, "echo", [&](const auto& e) { return !outbound(e).empty(); }));
  ASSERT_FALSE(record.empty());
  EXPECT_EQ(text_of(record, "message_id"), "out-corr-1");
  // Before: the correlation was the message_id again.
  EXPECT_EQ(text_of(record, "correlation_id"), text_of(final_packet, "packet_id"));
}

// faulty_hang never answers: its 300 ms limit marks the plugin degraded, which every signed-in channel shows.
TEST(events_correlation, a_health_change_reaches_a_signed_in_channel_that_has_no_socket) {
  server_fixture server({"faulty.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "faulty");
  ASSERT_TRUE(c);
  auto closed = c->open_signed_in("faulty_token", json::object{{"token", "t-1"}});
  auto open = c->open_signed_in("faulty_token", json::object{{"token", "t-2"}});
  ASSERT_FALSE(closed.empty());
  ASSERT_FALSE(open.empty());
  auto close = c->request("channel.close", {}, closed);
  ASSERT_TRUE(close);
  ASSERT_EQ(close->at("type"), "channel.close.ack");

  auto hang = c->invoke(open, "faulty_hang", {});
  ASSERT_TRUE(hang);
  auto all = events_when(server, "faulty", [&](const auto& e) {
    return !change(e, open, "plugin_health").empty() && !change(e, closed, "plugin_health").empty();
  });
  auto on_open = change(all, open, "plugin_health");
  ASSERT_FALSE(on_open.empty());
  EXPECT_EQ(text_of(on_open.at("payload").as_object(), "status"), "degraded");
  // Before: only channels with an open socket were looked at.
  auto on_closed = change(all, closed, "plugin_health");
  ASSERT_FALSE(on_closed.empty()) << "no ChannelStatusChanged for the channel without a socket";
  EXPECT_EQ(text_of(on_closed.at("payload").as_object(), "status"), "degraded");
  EXPECT_EQ(text_of(on_closed.at("payload").as_object(), "previous_status"), "connected");
  EXPECT_FALSE(text_of(on_closed, "correlation_id").empty());
}

}  // namespace
}  // namespace xconn::test
