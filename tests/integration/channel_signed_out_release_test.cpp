// Every way a channel stops being signed in releases its shared-consumer references exactly once: a restore
// answered revoked, expired, error, with a failure or with no report at all; the plugin's own expired or revoked
// report; a sign-out; a lease's end (the forced deregistration). The fixture plugin lifecycle
// (tests/plugins/fixtures/lifecycle.cpp) holds consumer "c-<name>" for a token "<name>/<restore verdict>" and lists
// every consumer the host told it to stop; /health counts the consumers still held.
#include "core/channels/consumer_registry.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

class signed_out_release : public ::testing::Test {
 protected:
  explicit signed_out_release(int lease_s = 3600)
      : server({"lifecycle.so"}, [lease_s](config& c) { c.leases.connector_offline_s = lease_s; }) {}
  void SetUp() override { server.start(); }

  std::unique_ptr<dp_client> connect(const std::string& connector_id = "") {
    json::object hello;
    if (!connector_id.empty()) hello["connector_id"] = connector_id;
    return dp_client::connect(server.port(), server.key(), "lifecycle", hello);
  }
  static std::string sign_in(dp_client& c, const std::string& token) {
    return c.open_signed_in("lifecycle_token", {{"token", token}});
  }
  std::int64_t live_consumers() {
    auto v = http_get(server.port(), "/connectors/lifecycle/health", server.key()).json();
    return v.at("consumers").at("live").to_number<std::int64_t>();
  }
  // The consumers the plugin was told to stop since it started, in order.
  std::vector<std::string> stops() {
    auto v = http_get(server.port(), "/connectors/lifecycle/state", server.key()).json();
    std::vector<std::string> out;
    for (const auto& k : v.at("stops").as_array()) out.emplace_back(k.as_string());
    return out;
  }
  // Each channel's descriptor status as GET {base}/channels shows it.
  std::map<std::string, std::string> statuses() {
    std::map<std::string, std::string> out;
    auto v = http_get(server.port(), "/connectors/lifecycle/channels", server.key()).json();
    for (const auto& ch : v.at("channels").as_array())
      out[std::string(ch.at("connector_channel_id").as_string())] = std::string(ch.at("status").as_string());
    return out;
  }
  bool logout(dp_client& c, const std::string& channel) {
    auto ack = c.request("auth.logout", {}, channel);
    return ack && text_of(payload_of(*ack), "status") == "ok";
  }
  // The references the store keeps for consumer_key (the server stopped).
  std::size_t stored_references(const std::string& consumer_key) {
    auto db = store::open({(server.dir().path() / "store").string(), 1ull << 26,
                           {std::string(consumer_registry::database)}});
    if (!db) {
      ADD_FAILURE() << db.error();
      return 0;
    }
    std::size_t n = 0;
    (*db)->scan(consumer_registry::database, "lifecycle\n", [&](std::string_view key, std::string_view) {
      if (key.ends_with("\n" + consumer_key)) ++n;
      return true;
    });
    return n;
  }
  // Waits for n stops (each runs on the plugin pool after its release), then reads them once more: a second stop
  // of a key would have been handed to the pool with the first.
  bool stops_settle_at(std::size_t n) {
    if (!wait_until([&] { return stops().size() >= n; }, 5s)) return false;
    return stops().size() == n;
  }

  server_fixture server;
};

// The case: two channels on one consumer, one of them refused at restore. Before, the refused channel
// kept its reference (2 held where 1 is right), and once the live one signed out the consumer kept running.
TEST_F(signed_out_release, a_channel_revoked_at_restore_lets_go_of_its_shared_consumer) {
  std::string id, live, refused;
  {
    auto c = connect();
    ASSERT_TRUE(c);
    id = c->connector_id();
    live = sign_in(*c, "bot/ok");
    refused = sign_in(*c, "bot/revoked");
    ASSERT_FALSE(refused.empty());
  }
  ASSERT_TRUE(wait_until([&] { return live_consumers() == 1; }));
  server.stop();
  ASSERT_EQ(stored_references("c-bot"), 2u);
  server.start();
  ASSERT_TRUE(wait_until([&] {
    auto s = statuses();
    return s[refused] == "revoked" && s[live] == "connected";
  }, 5s)) << "the restores did not answer";
  EXPECT_EQ(live_consumers(), 1);
  EXPECT_TRUE(stops().empty()) << "the live channel still holds the consumer";
  server.stop();
  EXPECT_EQ(stored_references("c-bot"), 1u) << "the revoked channel's reference is gone from the store too";
  server.start();
  auto c = connect(id);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open_channel(live));
  ASSERT_TRUE(wait_until([&] { return statuses()[live] == "connected"; }, 5s));
  ASSERT_TRUE(logout(*c, live));
  EXPECT_TRUE(wait_until([&] { return live_consumers() == 0; }, 5s)) << "the consumer is still held";
  EXPECT_TRUE(stops_settle_at(1));
  EXPECT_EQ(stops(), std::vector<std::string>{"c-bot"});
}

// Each restore answer that leaves a channel signed out or unconfirmed releases its reference: once its sibling
// signs out, their consumer stops, once. An offline answer keeps the channel signed in, and its reference.
TEST_F(signed_out_release, every_restore_answer_that_ends_the_sign_in_releases_once) {
  const std::vector<std::string> releasing = {"revoked", "expired", "fail", "error", "garbage"};
  std::string id;
  std::vector<std::string> siblings;
  {
    auto c = connect();
    ASSERT_TRUE(c);
    id = c->connector_id();
    for (const auto& verdict : releasing) {
      siblings.push_back(sign_in(*c, verdict + "/ok"));
      ASSERT_FALSE(sign_in(*c, verdict + "/" + verdict).empty());
    }
    siblings.push_back(sign_in(*c, "kept/ok"));
    ASSERT_FALSE(sign_in(*c, "kept/offline").empty());
  }
  server.stop();
  server.start();
  auto c = connect(id);
  ASSERT_TRUE(c);
  ASSERT_TRUE(wait_until([&] {
    auto s = statuses();
    return std::none_of(s.begin(), s.end(), [](const auto& kv) { return kv.second == "authenticating"; });
  }, 5s)) << "a restore did not answer";
  EXPECT_EQ(live_consumers(), static_cast<std::int64_t>(releasing.size() + 1));
  EXPECT_TRUE(stops().empty());
  for (const auto& s : siblings) {
    ASSERT_TRUE(c->open_channel(s));
    ASSERT_TRUE(logout(*c, s));
  }
  EXPECT_TRUE(wait_until([&] { return live_consumers() == 1; }, 5s)) << "held: " << live_consumers();
  ASSERT_TRUE(stops_settle_at(releasing.size()));
  auto stopped = stops();
  std::sort(stopped.begin(), stopped.end());
  std::vector<std::string> expected;
  for (const auto& verdict : releasing) expected.push_back("c-" + verdict);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(stopped, expected) << "c-kept is still held by the offline channel";
}

// The plugin's own report: an expired or revoked channel lets go at once, a sign-out after it releases nothing more.
TEST_F(signed_out_release, a_plugins_report_and_a_sign_out_after_it_release_once) {
  auto c = connect();
  ASSERT_TRUE(c);
  for (const char* report : {"revoked", "expired"}) {
    std::string name = std::string("rep-") + report;
    auto a = sign_in(*c, name + "/ok");
    auto b = sign_in(*c, name + "/ok");
    auto ack = c->invoke(b, "lifecycle_report", {{"status", report}});
    ASSERT_TRUE(ack);
    ASSERT_EQ(payload_of(*ack).at("result").at("taken"), true) << json::serialize(*ack);
    ASSERT_TRUE(logout(*c, a));
    ASSERT_TRUE(logout(*c, b));  // the reported channel signs out too: nothing of it is left to release
  }
  EXPECT_TRUE(wait_until([&] { return live_consumers() == 0; }, 5s));
  ASSERT_TRUE(stops_settle_at(2));
  EXPECT_EQ(stops(), (std::vector<std::string>{"c-rep-revoked", "c-rep-expired"}));
}

TEST_F(signed_out_release, a_repeated_sign_out_stops_the_consumer_once) {
  auto c = connect();
  ASSERT_TRUE(c);
  auto a = sign_in(*c, "pair/ok");
  auto b = sign_in(*c, "pair/ok");
  ASSERT_TRUE(logout(*c, a));
  EXPECT_EQ(live_consumers(), 1) << "b still holds it";
  ASSERT_TRUE(logout(*c, b));
  ASSERT_TRUE(logout(*c, b));
  ASSERT_TRUE(logout(*c, a));
  EXPECT_EQ(live_consumers(), 0);
  ASSERT_TRUE(stops_settle_at(1));
  EXPECT_EQ(stops(), std::vector<std::string>{"c-pair"});
}

class signed_out_release_short_lease : public signed_out_release {
 protected:
  signed_out_release_short_lease() : signed_out_release(1) {}
};

// A lease's end deregisters the channels: a consumer held by a live and a revoked channel stops once.
TEST_F(signed_out_release_short_lease, a_lease_end_releases_each_channel_once) {
  {
    auto c = connect();
    ASSERT_TRUE(c);
    auto a = sign_in(*c, "leased/ok");
    auto b = sign_in(*c, "leased/ok");
    sign_in(*c, "leased/ok");
    auto ack = c->invoke(b, "lifecycle_report", {{"status", "revoked"}});
    ASSERT_TRUE(ack);
    EXPECT_EQ(live_consumers(), 1);
  }
  EXPECT_TRUE(wait_until([&] { return statuses().empty(); }, 10s)) << "the lease did not end";
  EXPECT_EQ(live_consumers(), 0);
  ASSERT_TRUE(stops_settle_at(1));
  EXPECT_EQ(stops(), std::vector<std::string>{"c-leased"});
}

}  // namespace
}  // namespace xconn::test
