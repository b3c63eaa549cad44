// The figure the messaging work reports: 10,000 inbound messages emitted, delivered and acked end to end.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <set>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

std::uint64_t store_commits(unsigned short port, const std::string& key) {
  auto body = http_get(port, "/metrics", key).body;
  auto at = body.find("\nxconn_store_commits_total ");
  return at == std::string::npos ? 0 : std::stoull(body.substr(at + 27));
}

// Emit -> commit -> chat.message -> ack -> erase, end to end: the figure the messaging work reports. Prints the
// rate and the LMDB commits it took (the group commit at work); asserts only that every message arrived, in
// order of first arrival (a redelivery repeats an id already seen, which at-least-once allows).
class messaging_load : public ::testing::Test {
 protected:
  void SetUp() override { server.start(); }
  // The default delivery settings, but room for the whole burst: emits outrun one client's acks, and past the
  // cap the oldest would be evicted (as capacity_exceeded), which is not what this measures.
  server_fixture server{{"echo.so"}, [](config& c) { c.delivery.max_pending_per_channel = 10000; }};
};

TEST_F(messaging_load, ten_thousand_burst_messages_are_delivered_and_acked_end_to_end) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  constexpr int count = 10000;
  auto commits_before = store_commits(server.port(), server.key());
  auto started = steady::now();
  c->send("tool.invoke", {{"tool_id", "echo_burst"}, {"arguments", {{"count", count}, {"text", "load"}}},
                          {"context", {{"tool_call_id", "call_burst_10k"}}}}, channel);
  std::set<std::string> seen;
  int repeats = 0;
  for (int next = 1; next <= count;) {
    auto m = c->next_push("chat.message", channel, 20s);
    ASSERT_TRUE(m) << next;
    auto p = payload_of(*m);
    c->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    if (!seen.insert(text_of(p, "message_id")).second) {
      ++repeats;
      continue;
    }
    ASSERT_EQ(text_of(p, "text"), "load #" + std::to_string(next++));
  }
  double seconds = std::chrono::duration<double>(steady::now() - started).count();
  std::map<std::string, std::string> auth{{"Authorization", "Bearer " + server.key()}};
  wait_until([&] {
    return http_get(server.port(), "/connectors/echo/health", server.key()).json().at("inbound").at("pending") ==
           json::value(0);
  }, 20s);
  auto commits = store_commits(server.port(), server.key()) - commits_before;
  std::cout << "[ rate     ] " << count << " inbound messages emitted, delivered and acked in " << seconds
            << " s: " << static_cast<int>(count / seconds) << " messages/s; " << commits << " LMDB commits for "
            << 2 * count << " writes (emit + erase); " << repeats << " redeliveries" << std::endl;
}

}  // namespace
}  // namespace xconn::test
