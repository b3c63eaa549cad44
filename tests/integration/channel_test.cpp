// Channels on the real server with a real WebSocket client: open, reopen, close, the routing checks and the
// lease of temporary channels (spec §8.3-8.6, §9; docs/protocol.md "Data plane", "Channels"; docs/protocol.md
// "Channels", "Connection descriptors").
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::vector<std::string> both_profiles{"xagent.im.v1", "xagent.im.v2"};

// A well-formed payload for every user-level packet, so that only the routing can be at fault.
json::object valid_payload(const std::string& type) {
  if (type == "auth.start") return {{"flow_id", "echo_token"}, {"input", {{"token", good_token}}}};
  if (type == "auth.status") return {{"flow_id", "echo_qr_login"}, {"auth_session_id", "auth_0000000000000000000000"}};
  if (type == "auth.cancel") return {{"auth_session_id", "auth_0000000000000000000000"}};
  if (type == "tool.invoke") return {{"tool_id", "echo_reverse"}, {"arguments", {{"text", "abc"}}}, {"context", json::object{}}};
  return {};
}

const std::vector<std::string> user_level_types{"connection.descriptor.get", "channel.close", "auth.start",
                                                "auth.status",               "auth.cancel",   "auth.logout",
                                                "tool.invoke"};

class channel : public ::testing::Test {
 protected:
  void SetUp() override { server.start(); }
  std::unique_ptr<dp_client> connect(const json::object& hello = {}) {
    auto c = dp_client::connect(server.port(), server.key(), "echo", hello);
    EXPECT_TRUE(c);
    return c;
  }
  server_fixture server;
};

TEST_F(channel, open_without_an_id_creates_a_temporary_channel_with_a_created_descriptor) {
  auto c = connect();
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->connector_id().starts_with("conn_")) << c->connector_id();
  // Both spellings of "no id": the key left out, and the key empty.
  for (bool empty_key : {false, true}) {
    SCOPED_TRACE(empty_key ? "empty id" : "no id");
    auto ack = c->open_channel("", empty_key);
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->at("type"), "channel.open.ack");
    EXPECT_EQ(error_code(*ack), "");
    std::string id(ack->at("connector_channel_id").as_string());
    EXPECT_TRUE(is_random_id(id, "cch_")) << id;
    auto payload = payload_of(*ack);
    EXPECT_EQ(payload["connector_channel_id"], json::value(id));
    expect_descriptor(payload["connection_descriptor"],
                      signed_out_descriptor(id, c->connector_id(), both_profiles),
                      c->card(), "channel.open.ack");
  }
  // Two opens are two channels.
  EXPECT_NE(c->open(), c->open());
}

TEST_F(channel, the_descriptor_profiles_are_the_ones_negotiated) {
  // The hello offers one profile of the card and one it does not have: only the common one is enabled.
  auto c = connect({{"supported_profiles", json::array{"xagent.im.v2", "xagent.device.v1"}}});
  ASSERT_TRUE(c);
  auto ack = c->open_channel();
  ASSERT_TRUE(ack);
  std::string id(ack->at("connector_channel_id").as_string());
  expect_descriptor(payload_of(*ack)["connection_descriptor"],
                    signed_out_descriptor(id, c->connector_id(), {"xagent.im.v2"}),
                    c->card(), "v2 only");
  auto get = c->get_descriptor(id);
  ASSERT_TRUE(get);
  EXPECT_EQ(get->at("type"), "connection.descriptor.get.ack");
  expect_descriptor(payload_of(*get)["connection_descriptor"],
                    signed_out_descriptor(id, c->connector_id(), {"xagent.im.v2"}),
                    c->card(), "descriptor.get");
}

TEST_F(channel, reopening_from_another_socket_moves_the_owner_and_the_route) {
  auto first = connect();
  auto second = connect();  // an empty connector_id: a different owner
  ASSERT_TRUE(first && second);
  ASSERT_NE(first->connector_id(), second->connector_id());
  std::string id = first->open();
  ASSERT_FALSE(id.empty());

  auto ack = second->open_channel(id);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("type"), "channel.open.ack");
  EXPECT_EQ(ack->at("connector_channel_id"), json::value(id));
  EXPECT_EQ(payload_of(*ack)["connector_channel_id"], json::value(id));
  expect_descriptor(payload_of(*ack)["connection_descriptor"],
                    signed_out_descriptor(id, second->connector_id(), both_profiles),
                    second->card(), "reopened");

  // The route moved: the first socket no longer holds it, the second does.
  auto stale = first->get_descriptor(id);
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->at("type"), "error");
  EXPECT_EQ(error_code(*stale), "channel_not_open");
  auto fresh = second->get_descriptor(id);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->at("type"), "connection.descriptor.get.ack");
  EXPECT_EQ(descriptor_in(*fresh)["connection"].as_object()["connector_id"], json::value(second->connector_id()));

  // The first socket takes it back by opening it again.
  auto back = first->open_channel(id);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->at("connector_channel_id"), json::value(id));
  EXPECT_EQ(descriptor_in(*back)["connection"].as_object()["connector_id"], json::value(first->connector_id()));
  auto lost = second->get_descriptor(id);
  ASSERT_TRUE(lost);
  EXPECT_EQ(error_code(*lost), "channel_not_open");
}

TEST_F(channel, an_id_the_server_does_not_know_gets_a_new_channel) {
  auto c = connect();
  ASSERT_TRUE(c);
  for (const std::string unknown : {"cch_AAAAAAAAAAAAAAAAAAAAAA", "cch_never", "garbage"}) {
    auto ack = c->open_channel(unknown);
    ASSERT_TRUE(ack) << unknown;
    EXPECT_EQ(ack->at("type"), "channel.open.ack");
    std::string id(ack->at("connector_channel_id").as_string());
    EXPECT_NE(id, unknown);
    EXPECT_TRUE(is_random_id(id, "cch_")) << id;
    EXPECT_EQ(descriptor_in(*ack)["connection"].as_object()["status"], "created");
  }
}

TEST_F(channel, close_ends_the_route_only) {
  auto c = connect();
  ASSERT_TRUE(c);
  std::string id = c->open_authenticated();
  ASSERT_FALSE(id.empty());

  auto close = c->request("channel.close", {}, id);
  ASSERT_TRUE(close);
  EXPECT_EQ(close->at("type"), "channel.close.ack");
  EXPECT_EQ(payload_of(*close), (json::object{{"status", "ok"}}));
  EXPECT_EQ(error_code(*close), "");

  // Every user-level packet on it is now refused as not open, a second close included.
  for (const auto& type : user_level_types) {
    auto reply = c->request(type, valid_payload(type), id);
    ASSERT_TRUE(reply) << type;
    EXPECT_EQ(reply->at("type"), "error") << type;
    EXPECT_EQ(error_code(*reply), "channel_not_open") << type;
  }

  // Auth state and binding stayed: reopening finds the channel still signed in.
  auto ack = c->open_channel(id);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("connector_channel_id"), json::value(id));
  expect_descriptor(payload_of(*ack)["connection_descriptor"],
                    signed_in_descriptor(id, c->connector_id(), both_profiles, good_token_hint),
                    c->card(), "reopened after close");
}

TEST_F(channel, a_closed_socket_ends_its_routes) {
  auto first = connect();
  ASSERT_TRUE(first);
  std::string id = first->open();
  ASSERT_FALSE(id.empty());
  first.reset();
  // The channel is still known (not connection_not_found), and open nowhere.
  auto other = connect();
  ASSERT_TRUE(other);
  auto reply = other->get_descriptor(id);
  ASSERT_TRUE(reply);
  EXPECT_EQ(error_code(*reply), "channel_not_open");
  EXPECT_EQ(other->open(id), id);
}

TEST_F(channel, routing_errors_come_in_the_documented_order) {
  auto c = connect();
  auto other = connect();
  ASSERT_TRUE(c && other);
  std::string elsewhere = other->open();  // known, but opened on the other socket only
  ASSERT_FALSE(elsewhere.empty());
  std::string mine = c->open();
  ASSERT_FALSE(mine.empty());

  for (const auto& type : user_level_types) {
    SCOPED_TRACE(type);
    // No envelope id comes first, whatever else is wrong.
    auto missing = c->request(type, valid_payload(type));
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->at("type"), "error");
    EXPECT_EQ(error_code(*missing), "connector_channel_id_required");

    // An unknown id is not found (it is also not open here: not_found wins).
    auto unknown = c->request(type, valid_payload(type), "cch_AAAAAAAAAAAAAAAAAAAAAA");
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->at("type"), "error");
    EXPECT_EQ(error_code(*unknown), "connection_not_found");

    // A known id this socket never opened.
    auto not_open = c->request(type, valid_payload(type), elsewhere);
    ASSERT_TRUE(not_open);
    EXPECT_EQ(not_open->at("type"), "error");
    EXPECT_EQ(error_code(*not_open), "channel_not_open");
  }
  // The channel that is open here still works after all of that.
  auto fine = c->get_descriptor(mine);
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->at("type"), "connection.descriptor.get.ack");
  // The other socket's channel was not disturbed by the refused packets.
  auto theirs = other->get_descriptor(elsewhere);
  ASSERT_TRUE(theirs);
  EXPECT_EQ(theirs->at("type"), "connection.descriptor.get.ack");
}

TEST(channel_two_plugins, another_plugins_channel_is_a_connector_mismatch) {
  server_fixture server({"echo.so", "second.so"});
  server.start();
  auto echo = dp_client::connect(server.port(), server.key(), "echo");
  auto second = dp_client::connect(server.port(), server.key(), "second", {{"supported_profiles", json::array{"xagent.im.v2"}}});
  ASSERT_TRUE(echo && second);
  auto ack = second->open_channel();
  ASSERT_TRUE(ack);
  std::string theirs(ack->at("connector_channel_id").as_string());
  // One namespace for every plugin's channels.
  EXPECT_TRUE(is_random_id(theirs, "cch_")) << theirs;
  auto expected = signed_out_descriptor(theirs, second->connector_id(), {"xagent.im.v2"});
  expected.display_name = "second not bound";
  expected.card_id = "im.second";
  expected.provider = "second";
  expected.label = "second";
  expect_descriptor(payload_of(*ack)["connection_descriptor"], expected, second->card(), "second's channel");

  for (const auto& type : user_level_types) {
    auto reply = echo->request(type, valid_payload(type), theirs);
    ASSERT_TRUE(reply) << type;
    EXPECT_EQ(reply->at("type"), "error") << type;
    EXPECT_EQ(error_code(*reply), "connector_channel_connector_mismatch") << type;
  }
  // Opening another plugin's id on echo creates an echo channel; second's channel stays second's.
  std::string mine = echo->open(theirs);
  EXPECT_FALSE(mine.empty());
  EXPECT_NE(mine, theirs);
  auto still = second->get_descriptor(theirs);
  ASSERT_TRUE(still);
  EXPECT_EQ(still->at("type"), "connection.descriptor.get.ack");
}

TEST(channel_lease, an_unused_temporary_channel_expires_and_an_authenticated_one_stays) {
  server_fixture server({"echo.so"}, [](config& c) { c.leases.unauthenticated_channel_s = 1; });
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  auto probe = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c && probe);
  // Signed in first, so that by the time the temporary one is gone this one has been unused at least as long.
  std::string kept = c->open_authenticated();
  ASSERT_FALSE(kept.empty());
  std::string temporary = c->open();
  ASSERT_FALSE(temporary.empty());

  // Another socket asks about the id: channel_not_open while it exists, connection_not_found once it is gone.
  // Probes are spaced wider than the lease, so that even a server counting a refused probe as a use expires it.
  auto last_probe = std::chrono::steady_clock::now() - 10s;
  std::string last_code;
  bool gone = wait_until(
      [&] {
        if (std::chrono::steady_clock::now() - last_probe < 1500ms) return false;
        last_probe = std::chrono::steady_clock::now();
        auto reply = probe->get_descriptor(temporary);
        last_code = reply ? error_code(*reply) : "no answer";
        return last_code == "connection_not_found";
      },
      20s);
  EXPECT_TRUE(gone) << "last answer: " << last_code;

  // Reopening the expired id creates a new channel.
  std::string reopened = c->open(temporary);
  EXPECT_FALSE(reopened.empty());
  EXPECT_NE(reopened, temporary);

  // The authenticated channel, unused as long, is still there and still signed in.
  auto known = probe->get_descriptor(kept);
  ASSERT_TRUE(known);
  EXPECT_EQ(error_code(*known), "channel_not_open");
  auto ack = c->open_channel(kept);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("connector_channel_id"), json::value(kept));
  EXPECT_EQ(descriptor_in(*ack)["connection"].as_object()["status"], "connected");
}

TEST(channel_lease, a_temporary_channel_in_use_does_not_expire) {
  server_fixture server({"echo.so"}, [](config& c) { c.leases.unauthenticated_channel_s = 2; });
  server.start();
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  std::string id = c->open();
  ASSERT_FALSE(id.empty());
  // Used every 500 ms for three lease periods: it must still be there at each use.
  auto until = std::chrono::steady_clock::now() + 6s;
  auto last_use = std::chrono::steady_clock::now();
  bool alive = true;
  wait_until(
      [&] {
        if (std::chrono::steady_clock::now() - last_use < 500ms) return false;
        last_use = std::chrono::steady_clock::now();
        auto reply = c->get_descriptor(id);
        alive = reply && reply->at("type") == "connection.descriptor.get.ack";
        return !alive || std::chrono::steady_clock::now() >= until;
      },
      10s);
  EXPECT_TRUE(alive);
}

}  // namespace
}  // namespace xconn::test
