// A plugin's `unauthenticated` answer to auth.status ends the auth run, as `expired` does: the answer goes out,
// the channel stops showing authenticating, and later polls of that session are answered from its record
// (unauthenticated) without asking the plugin again. The fixture plugin lifecycle's QR flow answers every poll
// unauthenticated and counts the polls that reach it.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;

TEST(auth_unauthenticated, a_plugins_unauthenticated_answer_ends_the_run) {
  server_fixture server({"lifecycle.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "lifecycle");
  ASSERT_TRUE(c);
  auto channel = c->open();
  auto start = c->auth_start(channel, "lifecycle_qr", std::nullopt);
  ASSERT_TRUE(start);
  ASSERT_EQ(text_of(payload_of(*start), "status"), "pending") << json::serialize(*start);
  auto run = text_of(payload_of(*start), "auth_session_id");
  auto poll = [&] {
    auto ack = c->request("auth.status", {{"auth_session_id", run}}, channel);
    return ack ? payload_of(*ack) : json::object{};
  };
  auto status_calls = [&] {
    auto v = http_get(server.port(), "/connectors/lifecycle/state", server.key()).json();
    return v.at("status_calls").to_number<int>();
  };
  auto shown = [&] {
    auto v = http_get(server.port(), "/connectors/lifecycle/channels", server.key()).json();
    for (const auto& ch : v.at("channels").as_array())
      if (ch.at("connector_channel_id") == json::value(channel)) return std::string(ch.at("status").as_string());
    return std::string();
  };
  EXPECT_EQ(shown(), "authenticating");

  EXPECT_EQ(text_of(poll(), "status"), "unauthenticated");
  EXPECT_EQ(status_calls(), 1);
  EXPECT_EQ(shown(), "created") << "the run is over: the channel no longer shows authenticating";
  auto again = poll();
  EXPECT_EQ(text_of(again, "status"), "unauthenticated") << json::serialize(again);
  EXPECT_EQ(status_calls(), 1) << "an ended run is answered from its record";

  auto descriptor = c->get_descriptor(channel);
  ASSERT_TRUE(descriptor);
  EXPECT_EQ(text_of(payload_of(*descriptor).at("connection_descriptor").at("connection").as_object(), "status"),
            "created");
}

}  // namespace
}  // namespace xconn::test
