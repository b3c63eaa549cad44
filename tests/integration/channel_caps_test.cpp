// Caps on temporary channels (docs/protocol.md "Limits"): channel.open past leases.max_temporary_per_connector_id or
// leases.max_temporary_per_connector answers capacity_exceeded and creates nothing; signed-in channels never count.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {

TEST(channel_caps, channel_open_past_a_temporary_cap_answers_capacity_exceeded_and_signing_in_gives_room) {
  server_fixture server({"echo.so"}, [](config& c) {
    c.leases.max_temporary_per_connector_id = 2;
    c.leases.max_temporary_per_connector = 3;
  });
  server.start();
  auto first = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(first);
  auto a = first->open();
  auto b = first->open();
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  auto refused = first->open_channel();
  ASSERT_TRUE(refused);
  EXPECT_EQ(text_of(*refused, "type"), "error");
  EXPECT_EQ(error_code(*refused), "capacity_exceeded");
  EXPECT_NE(boost::json::serialize(*refused).find("leases.max_temporary_per_connector_id"), std::string::npos);
  // Reopening a known channel is never refused.
  auto again = first->open_channel(a);
  ASSERT_TRUE(again);
  EXPECT_EQ(text_of(*again, "type"), "channel.open.ack");

  // A second connector_id has its own room, up to the connector's 3 in all.
  auto second = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(second);
  ASSERT_FALSE(second->open().empty());
  auto past_connector = second->open_channel();
  ASSERT_TRUE(past_connector);
  EXPECT_EQ(error_code(*past_connector), "capacity_exceeded");
  EXPECT_NE(boost::json::serialize(*past_connector).find("leases.max_temporary_per_connector)"), std::string::npos)
      << boost::json::serialize(*past_connector);

  // Signing one in makes it persistent: there is room for a new one again.
  auto signed_in = first->authenticate(a);
  ASSERT_TRUE(signed_in);
  EXPECT_EQ(text_of(payload_of(*signed_in), "status"), "authenticated");
  EXPECT_FALSE(first->open().empty());
}

}  // namespace
}  // namespace xconn::test
