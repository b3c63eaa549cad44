// Channels and descriptors on the real server with a real WebSocket client (spec §8.3-8.6, §8.15-8.17, §9;
// docs/protocol.md "Channels" and "Connection descriptors").
#include "support/server_fixture.hpp"
#include "support/xagent_session.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace xconn::test {
namespace {
namespace json = boost::json;

class channels : public ::testing::Test {
 protected:
  void SetUp() override { server.start(); }
  void TearDown() override { server.stop(); }

  static void expect_valid_descriptor(const json::object& packet) {
    EXPECT_EQ(schema_violations("xagent.connection.v2", json::serialize(descriptor_of(packet))), "");
  }

  server_fixture server;
};

TEST_F(channels, open_with_no_id_creates_a_temporary_created_channel) {
  xagent_session s(server.port(), server.key());
  ASSERT_TRUE(s.ok());
  auto ack = s.open();
  ASSERT_EQ(ack.at("type"), "channel.open.ack");
  std::string id(ack.at("connector_channel_id").as_string());
  EXPECT_TRUE(std::regex_match(id, std::regex("cch_[0-9A-Za-z]{22}"))) << id;
  EXPECT_EQ(ack.at("payload").at("connector_channel_id").as_string(), id);
  expect_valid_descriptor(ack);
  const auto& d = descriptor_of(ack);
  const auto& c = d.at("connection").as_object();
  EXPECT_EQ(c.at("connector_card_id"), "im.echo");
  EXPECT_EQ(c.at("connector_id").as_string(), s.connector_id());
  EXPECT_EQ(c.at("connector_channel_id").as_string(), id);
  EXPECT_EQ(c.at("target_type"), "im");
  EXPECT_EQ(c.at("profiles"), (json::array{"xagent.im.v1", "xagent.im.v2"}));
  EXPECT_EQ(c.at("status"), "created");
  EXPECT_EQ(d.at("target"), (json::object{{"provider", "echo"}, {"label", "Echo"}, {"display_name", "Echo not bound"}}));
  ASSERT_FALSE(d.at("tools").as_array().empty());
  for (const auto& t : d.at("tools").as_array()) {
    EXPECT_EQ(t.at("status"), "unavailable");
    EXPECT_EQ(t.at("target_permission_state"), "unknown");
  }
  EXPECT_EQ(s.violations(), "");
}

TEST_F(channels, descriptor_profiles_are_those_the_socket_negotiated) {
  xagent_session v2(server.port(), server.key(), "echo", "im.echo", "", {"xagent.im.v2", "xagent.other.v9"});
  auto ack = v2.open();
  EXPECT_EQ(descriptor_of(ack).at("connection").at("profiles"), (json::array{"xagent.im.v2"}));
}

TEST_F(channels, reopening_a_known_id_moves_owner_and_route_to_the_new_socket) {
  xagent_session first(server.port(), server.key());
  std::string id(first.open().at("connector_channel_id").as_string());
  xagent_session second(server.port(), server.key());
  ASSERT_NE(first.connector_id(), second.connector_id());
  auto ack = second.open(id);
  EXPECT_EQ(ack.at("connector_channel_id").as_string(), id);
  EXPECT_EQ(descriptor_of(ack).at("connection").at("connector_id").as_string(), second.connector_id());
  // The first socket lost the route.
  EXPECT_EQ(error_code_of(first.call("connection.descriptor.get", id)), "channel_not_open");
  auto get = second.call("connection.descriptor.get", id);
  ASSERT_EQ(get.at("type"), "connection.descriptor.get.ack");
  expect_valid_descriptor(get);
}

TEST_F(channels, an_unknown_id_gets_a_new_channel) {
  xagent_session s(server.port(), server.key());
  auto ack = s.open("cch_neverIssued000000000000");
  EXPECT_NE(ack.at("connector_channel_id"), "cch_neverIssued000000000000");
  EXPECT_EQ(status_of_descriptor(ack), "created");
}

TEST_F(channels, routing_errors_come_in_the_documented_order) {
  xagent_session s(server.port(), server.key());
  std::string id(s.open().at("connector_channel_id").as_string());
  for (std::string type : {"channel.close", "connection.descriptor.get", "auth.start", "auth.status", "auth.cancel",
                           "auth.logout", "tool.invoke"}) {
    auto missing = s.call(type, "");
    EXPECT_EQ(missing.at("type"), "error") << type;
    EXPECT_EQ(error_code_of(missing), "connector_channel_id_required") << type;
    EXPECT_EQ(error_code_of(s.call(type, "cch_unknown")), "connection_not_found") << type;
  }
  xagent_session other(server.port(), server.key());
  EXPECT_EQ(error_code_of(other.call("connection.descriptor.get", id)), "channel_not_open");
  EXPECT_EQ(error_code_of(other.invoke(id, "echo_reverse", {{"text", "x"}})), "channel_not_open");
  EXPECT_EQ(s.violations(), "");
}

TEST_F(channels, close_ends_the_route_only) {
  xagent_session s(server.port(), server.key());
  std::string id(s.open().at("connector_channel_id").as_string());
  ASSERT_EQ(s.sign_in(id, "close-test-token").at("payload").at("status"), "authenticated");
  auto ack = s.call("channel.close", id);
  ASSERT_EQ(ack.at("type"), "channel.close.ack");
  EXPECT_EQ(ack.at("payload"), (json::object{{"status", "ok"}}));
  EXPECT_EQ(error_code_of(s.call("connection.descriptor.get", id)), "channel_not_open");
  EXPECT_EQ(error_code_of(s.invoke(id, "echo_reverse", {{"text", "x"}})), "channel_not_open");
  // Reopened: still signed in.
  EXPECT_EQ(status_of_descriptor(s.open(id)), "connected");
}

TEST(channels_other_plugin, an_id_of_another_plugin_is_a_mismatch_and_reopening_it_creates_a_new_one) {
  server_fixture server({"echo.so", "second.so"});
  server.start();
  xagent_session second(server.port(), server.key(), "second", "im.second", "", {"xagent.im.v2"});
  std::string theirs(second.open().at("connector_channel_id").as_string());
  xagent_session echo(server.port(), server.key());
  EXPECT_EQ(error_code_of(echo.call("connection.descriptor.get", theirs)), "connector_channel_connector_mismatch");
  EXPECT_EQ(error_code_of(echo.invoke(theirs, "echo_reverse", {{"text", "x"}})), "connector_channel_connector_mismatch");
  EXPECT_NE(echo.open(theirs).at("connector_channel_id").as_string(), theirs);
}

TEST(channels_lease, an_unused_temporary_channel_expires_and_an_authenticated_one_does_not) {
  server_fixture server({"echo.so"}, [](config& c) { c.leases.unauthenticated_channel_s = 1; });
  server.start();
  xagent_session s(server.port(), server.key());
  std::string temporary(s.open().at("connector_channel_id").as_string());
  std::string kept(s.open().at("connector_channel_id").as_string());
  ASSERT_EQ(s.sign_in(kept, "lease-test-token").at("payload").at("status"), "authenticated");
  // Watched through /health, which does not use the channel (a packet on it would keep it alive).
  auto open_channels = [&] {
    return http_get(server.port(), "/connectors/echo/health", server.key()).json().at("channels").at("open").as_int64();
  };
  EXPECT_EQ(open_channels(), 2);
  EXPECT_TRUE(wait_until([&] { return open_channels() == 1; }, std::chrono::seconds(10)));
  EXPECT_EQ(error_code_of(s.call("connection.descriptor.get", temporary)), "connection_not_found");
  EXPECT_NE(s.open(temporary).at("connector_channel_id").as_string(), temporary);
  auto still = s.call("connection.descriptor.get", kept);
  ASSERT_EQ(still.at("type"), "connection.descriptor.get.ack");
  EXPECT_EQ(status_of_descriptor(still), "connected");
}

}  // namespace
}  // namespace xconn::test
