// A backlog that waits for a socket (docs/protocol.md "Limits", "Inbound messages", "Outbound messages"): a peer that
// does not read while many channels push gets no more than server.max_outbox_bytes (plus one frame) queued for it, the
// rest waits in the store and arrives, in order and whole, once it reads; and the queues keep their messages' bodies in
// the store, not on the heap, before and after a restart.
#include "support/data_plane.hpp"
#include "support/messaging_fixture.hpp"

#include <gtest/gtest.h>

#include <malloc.h>

#include <map>
#include <sstream>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr std::uint64_t backlog_budget = 1 << 20;
constexpr std::size_t backlog_body_bytes = 60000;

// A body that names its channel and place, then filler with quotes, escapes and UTF-8, so that a byte lost or
// swapped on the way through the store shows.
std::string backlog_body(int channel, int i) {
  std::string s = "c" + std::to_string(channel) + "-m" + std::to_string(i) + " \"q\" \\ é ✓ ";
  while (s.size() < backlog_body_bytes) s += static_cast<char>('a' + (s.size() * 7 + i) % 26);
  return s;
}

// The value of a sample line "name{plugin="echo"} v" of /metrics; -1 when missing.
long long echo_metric(unsigned short port, const std::string& key, const std::string& name) {
  std::istringstream lines(http_get(port, "/metrics", key).body);
  std::string line, prefix = name + "{plugin=\"echo\"} ";
  while (std::getline(lines, line))
    if (line.rfind(prefix, 0) == 0) return std::stoll(line.substr(prefix.size()));
  return -1;
}

class messaging_backlog : public messaging {
 protected:
  messaging_backlog()
      : messaging([](config& c) {
          c.server.max_outbox_bytes = backlog_budget;
          c.server.heartbeat_s = 60;  // a peer that reads nothing for a while is not dropped during the test
          c.delivery.ack_timeout_s = 60;
          c.delivery.retry_max_s = 60;
          c.delivery.window = 32;
        }) {}
};

TEST_F(messaging_backlog, a_peer_that_does_not_read_gets_at_most_the_budget_and_then_everything_in_order) {
  // 20 channels × 16 messages of 60 KB: 19 MB, past what the loopback's socket buffers take with the budget.
  constexpr int channels = 20, per_channel = 16;
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  std::vector<std::string> ids;
  for (int ch = 0; ch < channels; ++ch) {
    ids.push_back(c->open_authenticated());
    ASSERT_FALSE(ids.back().empty());
  }
  // The socket stops being read from here: every push waits on the server's side.
  for (int i = 0; i < per_channel; ++i)
    for (int ch = 0; ch < channels; ++ch)
      inject_ok(ids[ch], {{"text", backlog_body(ch, i)}, {"msg_id", "b" + std::to_string(ch) + "-" + std::to_string(i)}});
  constexpr long long total = channels * per_channel;
  ASSERT_TRUE(wait_inbound("accepted", total, 20s));
  // Deliveries go on until the socket's outbox reaches the budget, then stop there.
  auto metric = [&](const char* name) { return echo_metric(server.port(), server.key(), name); };
  const auto most = static_cast<long long>(backlog_budget + backlog_body_bytes + 4096);  // one frame past it
  ASSERT_TRUE(wait_until([&] { return metric("xconn_outbox_peak_bytes") >= static_cast<long long>(backlog_budget); }, 20s))
      << "the outbox never reached the budget: " << metric("xconn_outbox_peak_bytes");
  auto sent = inbound_count("sent");
  EXPECT_LT(sent, total) << "everything was pushed to a socket that reads nothing";
  EXPECT_LE(metric("xconn_outbox_peak_bytes"), most) << "past the budget by more than one frame";
  EXPECT_LE(metric("xconn_outbox_bytes"), most);
  EXPECT_EQ(inbound_count("pending"), total) << "held messages stay queued";

  // The peer reads: everything arrives, each channel in order, each body whole, nothing twice.
  std::map<std::string, int> next;
  std::map<std::string, int> channel_no;
  for (int ch = 0; ch < channels; ++ch) channel_no[ids[ch]] = ch;
  for (long long n = 0; n < total; ++n) {
    auto m = c->next_push("chat.message", "", 20s);
    ASSERT_TRUE(m) << "after " << n << " of " << total;
    auto ch = text_of(*m, "connector_channel_id");
    auto p = payload_of(*m);
    ASSERT_TRUE(channel_no.count(ch)) << ch;
    auto& i = next[ch];
    ASSERT_EQ(text_of(p, "text"), backlog_body(channel_no[ch], i)) << "channel " << channel_no[ch] << " message " << i;
    ++i;
    accept(*c, ch, *m);
  }
  for (int ch = 0; ch < channels; ++ch) EXPECT_EQ(next[ids[ch]], per_channel);
  EXPECT_TRUE(wait_inbound("delivered", total, 20s)) << inbound_count("delivered");
  EXPECT_EQ(inbound_count("pending"), 0);
  EXPECT_EQ(inbound_count("redelivered"), 0) << "a held message is not a redelivery";
  EXPECT_LE(metric("xconn_outbox_peak_bytes"), most);
}

// In use on the heap of this process (the server runs in it); 0 when the allocator does not say (sanitizers).
std::size_t backlog_heap() {
  auto m = mallinfo2();
  return m.uordblks + m.hblkhd;  // small chunks in every arena, and the large ones mapped on their own
}

TEST_F(messaging_backlog, a_backlog_keeps_its_bodies_in_the_store_and_a_restart_loads_only_the_index) {
  constexpr int count = 300;  // 18 MB of bodies
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_TRUE(c->request("channel.close", {}, channel));
  }
  malloc_trim(0);
  auto before = backlog_heap();
  for (int i = 0; i < count; ++i) inject_ok(channel, {{"text", backlog_body(0, i)}, {"msg_id", "r" + std::to_string(i)}});
  ASSERT_TRUE(wait_inbound("pending", count, 20s));
  if (before == 0) GTEST_SKIP() << "the allocator reports no heap figures here";
  // The emits' batches are freed once committed: the heap settles soon after the last emit.
  const std::size_t bound = count * backlog_body_bytes / 8;
  EXPECT_TRUE(wait_until([&] { return backlog_heap() < before + bound; }, 10s))
      << "the queue holds " << (backlog_heap() - before) / 1024 << " KiB for " << count * backlog_body_bytes / 1024
      << " KiB of bodies";

  server.stop();
  malloc_trim(0);
  auto stopped = backlog_heap();
  server.start();
  ASSERT_TRUE(wait_inbound("pending", count, 5s));
  // A start allocates a few MiB of its own (plugins, buffers): bodies read back would be 17 MiB on top.
  EXPECT_TRUE(wait_until([&] { return backlog_heap() < stopped + 3 * bound; }, 10s))
      << "the restart loaded " << (backlog_heap() - stopped) / 1024 << " KiB for " << count * backlog_body_bytes / 1024
      << " KiB of bodies";

  // Sent after the restart: the bodies read back from the store, byte for byte, in order.
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(channel));
  for (int i = 0; i < count; ++i) {
    auto m = c->next_push("chat.message", channel, 20s);
    ASSERT_TRUE(m) << i;
    ASSERT_EQ(text_of(payload_of(*m), "text"), backlog_body(0, i)) << i;
    accept(*c, channel, *m);
  }
  EXPECT_TRUE(wait_inbound("pending", 0, 20s));
}

}  // namespace
}  // namespace xconn::test
