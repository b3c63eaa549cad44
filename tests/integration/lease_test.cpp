// connector_id offline leases on the real server with a 2-second lease (seed 000 "Connector Server offline
// lease", spec §8.2): expiry deregisters the id and its channels; a reconnect inside the lease keeps both; a
// restart neither resets nor forgets a lease; shared consumers stop only with their last channel.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

class leases : public ::testing::Test {
 protected:
  // relay is there only to hold a witness's lease (a_lease_started_now_ran_out).
  leases() : server({"echo.so", "relay.so"}, [](config& c) { c.leases.connector_offline_s = 2; }) {}
  void SetUp() override { server.start(); }

  json::object health(const std::string& plugin = "echo") {
    auto v = http_get(server.port(), "/connectors/" + plugin + "/health", server.key()).json();
    return v.is_object() ? v.as_object() : json::object{};
  }
  std::int64_t authenticated(const std::string& plugin = "echo") {
    return health(plugin)["channels"].as_object()["authenticated"].to_number<std::int64_t>();
  }
  std::int64_t live_consumers() { return health()["consumers"].as_object()["live"].to_number<std::int64_t>(); }

  // True once a lease that starts now has run out, so that any lease started before it has too: what did not
  // expire by then was never running. A witness connector_id signs a channel in on relay and goes offline; its
  // lease has run out when that channel is deregistered (each tick expires every lease past its deadline, and
  // relay's channels count apart from echo's).
  bool a_lease_started_now_ran_out() {
    auto witness = dp_client::connect(server.port(), server.key(), "relay");
    if (!witness) return false;
    auto channel = witness->open();
    auto ack = witness->auth_start(channel, "relay_token", json::object{{"token", "witness-token"}});
    if (!ack || text_of(payload_of(*ack), "status") != "authenticated" || authenticated("relay") != 1) return false;
    witness.reset();
    return wait_until([&] { return authenticated("relay") == 0; });
  }

  server_fixture server;
};

TEST_F(leases, an_expired_lease_deregisters_the_id_and_its_channels) {
  std::string connector_id, channel;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
  }
  ASSERT_TRUE(wait_until([&] { return authenticated() == 0; })) << "the channel was not deregistered";
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  EXPECT_NE(c->connector_id(), connector_id) << "a later hello gets a new id";
  auto reopened = c->open(channel);
  EXPECT_FALSE(reopened.empty());
  EXPECT_NE(reopened, channel) << "the channel id no longer works";
}

TEST_F(leases, a_reconnect_inside_the_lease_keeps_the_id_and_the_channel) {
  std::string connector_id, channel;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
  }
  auto c = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->connector_id(), connector_id);
  // Past the end of the lease the close started: the hello cancelled it.
  ASSERT_TRUE(a_lease_started_now_ran_out());
  EXPECT_EQ(authenticated(), 1);
  auto ack = c->open_channel(channel);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("connector_channel_id"), json::value(channel));
}

TEST_F(leases, two_sockets_on_one_id_start_the_lease_only_when_the_last_closes) {
  auto first = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(first);
  auto id = first->connector_id();
  auto channel = first->open_authenticated();
  auto second = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", id}});
  ASSERT_TRUE(second);
  ASSERT_EQ(second->connector_id(), id);
  first.reset();
  ASSERT_TRUE(a_lease_started_now_ran_out());
  EXPECT_EQ(authenticated(), 1) << "the second socket still holds the id";
  second.reset();
  EXPECT_TRUE(wait_until([&] { return authenticated() == 0; }));
}

TEST_F(leases, a_restart_keeps_the_lease_and_deregisters_channels_nobody_came_back_for) {
  std::string channel;
  {
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    channel = c->open_authenticated();
  }
  server.stop();
  server.start();
  EXPECT_TRUE(wait_until([&] { return authenticated() == 0; })) << "no hello came within the lease";
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  EXPECT_NE(c->open(channel), channel);
}

TEST_F(leases, channels_with_one_token_share_one_consumer_until_the_last_lets_go) {
  auto c = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(c);
  auto a = c->open_authenticated("shared-token-1");
  auto b = c->open_authenticated("shared-token-1");
  auto other = c->open_authenticated("other-token-2");
  EXPECT_EQ(live_consumers(), 2);
  ASSERT_TRUE(c->request("auth.logout", {}, a));
  EXPECT_EQ(live_consumers(), 2) << "b still holds the shared consumer";
  ASSERT_TRUE(c->request("auth.logout", {}, b));
  EXPECT_EQ(live_consumers(), 1);
  // The lease's deregistration drops the last one too.
  c.reset();
  EXPECT_TRUE(wait_until([&] { return live_consumers() == 0; }));
  auto metrics = http_get(server.port(), "/metrics", server.key()).body;
  EXPECT_NE(metrics.find("xconn_consumers_live{plugin=\"echo\"} 0\n"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("shared-token-1"), std::string::npos) << "a token never shows";
}

// The figure the leases work reports: 10,000 channels of one connector_id deregistered when its lease runs out,
// while another socket keeps pinging. Prints the time and the ping latencies; asserts only that all went and
// every ping was answered.
TEST(leases_load, ten_thousand_channels_are_deregistered_while_pings_are_answered) {
  server_fixture server({"echo.so"}, [](config& c) {
    c.leases.connector_offline_s = 1;
    c.leases.max_temporary_per_connector_id = 500;  // a wave of 500 opens comes before its sign-ins
  });
  server.start();
#if defined(__SANITIZE_ADDRESS__)
  constexpr int count = 2000;  // the same path, in a time a sanitized build can afford; the figure is Release's
#else
  constexpr int count = 10000;
#endif
  {
    // A bare client (no schema check of 40,000 packets): opened and signed in, 500 requests in flight at a time.
    auto ws = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key()});
    ASSERT_TRUE(ws);
    ASSERT_TRUE(ws->hello());
    auto await = [&](const std::string& type, int n, std::vector<std::string>* ids) {
      for (int got = 0; got < n;) {
        auto p = ws->receive_json(30s);
        ASSERT_TRUE(p) << type << " " << got;
        if (p->at("type") != json::value(type)) continue;  // descriptor pushes and the like
        ASSERT_FALSE(p->contains("error")) << json::serialize(*p);
        if (ids) ids->emplace_back(p->at("connector_channel_id").as_string());
        ++got;
      }
    };
    for (int wave = 0; wave < count / 500; ++wave) {
      std::vector<std::string> ids;
      for (int i = 0; i < 500; ++i) ws->send_json(make_packet("channel.open", {}));
      await("channel.open.ack", 500, &ids);
      for (const auto& id : ids)
        ws->send_json(make_packet("auth.start", {{"flow_id", "echo_token"}, {"input", {{"token", "load-token"}}}}, id));
      await("auth.start.ack", 500, nullptr);
    }
  }
  auto watcher = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(watcher);
  auto authenticated = [&] {
    auto v = http_get(server.port(), "/connectors/echo/health", server.key()).json();
    return v.at("channels").at("authenticated").to_number<std::int64_t>();
  };
  // The lease is 1 s; from then on the deregistration runs. Ping while it does.
  std::vector<double> pings_ms;
  auto deadline = steady::now() + 120s;
  steady::time_point began{}, ended{};
  std::int64_t left = count;
  while (steady::now() < deadline) {
    auto sent = steady::now();
    auto pong = watcher->request("ping", {});
    ASSERT_TRUE(pong);
    pings_ms.push_back(std::chrono::duration<double, std::milli>(steady::now() - sent).count());
    left = authenticated();
    if (left < count && began == steady::time_point{}) began = steady::now();
    if (left == 0) {
      ended = steady::now();
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(left, 0);
  std::sort(pings_ms.begin(), pings_ms.end());
  auto at = [&](double q) { return pings_ms[static_cast<std::size_t>(q * (pings_ms.size() - 1))]; };
  std::cout << "[ leases   ] " << count << " channels force-deregistered in about "
            << std::chrono::duration<double>(ended - began).count() << " s (from the first one observed gone); "
            << pings_ms.size() << " pings meanwhile: p50 " << at(0.5) << " ms, p99 " << at(0.99) << " ms, max "
            << pings_ms.back() << " ms" << std::endl;
}

}  // namespace
}  // namespace xconn::test
