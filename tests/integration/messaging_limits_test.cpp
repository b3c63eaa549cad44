// The per-channel cap and expiry of inbound messages, with small limits: the oldest is evicted as
// capacity_exceeded, an expired message is never delivered and is counted, and retries do not extend the expiry
// (IM v2 §9; docs/protocol.md "Inbound messages", "Outbound messages").
#include "support/data_plane.hpp"
#include "support/messaging_fixture.hpp"
#include "support/server_fixture.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

class messaging_small : public messaging {
 protected:
  messaging_small()
      : messaging([](config& c) {
          c.delivery.max_pending_per_channel = 3;
          c.delivery.expiry_s = 2;
        }) {}
};

TEST_F(messaging_small, the_cap_evicts_the_oldest_as_capacity_exceeded) {
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    c->request("channel.close", {}, channel);
  }
  for (int i = 1; i <= 5; ++i) inject_ok(channel, {{"text", "n" + std::to_string(i)}});
  EXPECT_EQ(inbound_count("evicted"), 2);
  EXPECT_EQ(inbound_count("pending"), 3);
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c->open_channel(channel));
  for (int i = 3; i <= 5; ++i) {
    auto m = c->next_push("chat.message", channel);
    ASSERT_TRUE(m);
    EXPECT_EQ(text_of(payload_of(*m), "text"), "n" + std::to_string(i));
    accept(*c, channel, *m);
  }
  EXPECT_TRUE(wait_inbound("pending", 0));
}

TEST_F(messaging_small, an_expired_message_is_never_delivered_and_is_counted) {
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    c->request("channel.close", {}, channel);
  }
  inject_ok(channel, {{"text", "too late"}});
  EXPECT_TRUE(wait_inbound("expired", 1, 6s));
  EXPECT_EQ(inbound_count("pending"), 0);
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c->open_channel(channel));
  EXPECT_FALSE(c->next_push("chat.message", channel, 500ms));
}

TEST_F(messaging_small, retries_do_not_extend_the_expiry) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  inject_ok(channel, {{"text", "keep failing"}});
  auto start = steady::now();
  // Rejected retryably each time: it comes back until its 2 s are up, then never again.
  while (auto m = c->next_push("chat.message", channel, 3s)) {
    ack(*c, channel, *m, {{"status", "rejected"}, {"code", "channel_busy"}, {"retryable", true}});
    ASSERT_LT(steady::now() - start, 5s);
  }
  EXPECT_TRUE(wait_inbound("expired", 1));
}

}  // namespace
}  // namespace xconn::test
