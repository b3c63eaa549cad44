// A plugin hears when a channel ends (plugin.h on_channel_end): closed by xAgent, deregistered by a lease that ran
// out, or a temporary channel that expired unused; each once, with its reason. Read back through the fixture relay,
// whose relay_log lists every end it was told of.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

std::string signed_in(dp_client& c) { return c.open_signed_in("relay_token", {{"token", "tok-relay-1"}}); }

// The ends relay was told of, as "channel reason" lines, read through a signed-in channel of reader.
std::vector<std::string> ends_seen(dp_client& reader, const std::string& channel) {
  std::vector<std::string> out;
  auto ack = reader.invoke(channel, "relay_log", {});
  if (!ack || !error_code(*ack).empty()) return out;
  auto payload = payload_of(*ack);
  for (const auto& e : payload["result"].as_object()["ended"].as_array())
    out.push_back(text_of(e.as_object(), "channel") + " " + text_of(e.as_object(), "reason"));
  return out;
}

bool seen(dp_client& reader, const std::string& channel, const std::string& line) {
  return wait_until([&] {
    auto ends = ends_seen(reader, channel);
    return std::find(ends.begin(), ends.end(), line) != ends.end();
  });
}

TEST(channel_end, a_close_a_lease_that_ran_out_and_an_unused_temporary_channel_each_tell_the_plugin_once) {
  server_fixture server({"relay.so"}, [](config& c) {
    c.leases.connector_offline_s = 1;
    c.leases.unauthenticated_channel_s = 1;
  });
  server.start();
  auto reader = dp_client::connect(server.port(), server.key(), "relay");
  ASSERT_TRUE(reader);
  auto reading = signed_in(*reader);
  ASSERT_FALSE(reading.empty());

  // Closed: its route ends, it stays signed in, and the plugin hears "closed".
  auto closing = signed_in(*reader);
  ASSERT_TRUE(reader->request("channel.close", {}, closing));
  EXPECT_TRUE(seen(*reader, reading, closing + " closed"));

  // Temporary and unused: swept, "expired".
  auto unused = reader->open();
  ASSERT_FALSE(unused.empty());
  EXPECT_TRUE(seen(*reader, reading, unused + " expired"));

  // Its connector_id went offline past the lease: "deregistered".
  std::string leased;
  {
    auto other = dp_client::connect(server.port(), server.key(), "relay");
    ASSERT_TRUE(other);
    leased = signed_in(*other);
    ASSERT_FALSE(leased.empty());
  }
  EXPECT_TRUE(seen(*reader, reading, leased + " deregistered"));

  auto ends = ends_seen(*reader, reading);
  EXPECT_EQ(std::count(ends.begin(), ends.end(), closing + " closed"), 1);
  EXPECT_EQ(std::count(ends.begin(), ends.end(), unused + " expired"), 1);
  EXPECT_EQ(std::count(ends.begin(), ends.end(), leased + " deregistered"), 1);
  // The reading channel never ended.
  for (const auto& e : ends) EXPECT_NE(e.rfind(reading, 0), 0u) << e;
}

}  // namespace
}  // namespace xconn::test
