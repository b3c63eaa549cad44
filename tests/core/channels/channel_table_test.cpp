// channel_table: opening and reopening channels, route checks, the ttl of temporary channels, and counts.
#include "core/channels/channel_table.hpp"

#include "support/channel_table_fixture.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

// open -------------------------------------------------------------------------------------------------------

TEST_F(ChannelTable, OpenWithEmptyIdCreatesARandomCchId) {
  auto [c, created] = table.open("echo", "", "conn_a", route);
  EXPECT_TRUE(created);
  EXPECT_TRUE(is_base62_id(c.id, "cch_")) << c.id;
  EXPECT_EQ(c.plugin_id, "echo");
  EXPECT_EQ(c.owner, "conn_a");
  EXPECT_FALSE(c.persistent);
  EXPECT_FALSE(c.authenticated);
  EXPECT_GT(c.created_at, 1'600'000'000'000LL);  // unix ms, not zero
  EXPECT_EQ(c.last_used, clock.now);
  EXPECT_EQ(c.route.lock(), route);
  ASSERT_NE(table.find(c.id), nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST_F(ChannelTable, EveryCreatedIdIsDifferent) {
  std::set<std::string> ids;
  for (int i = 0; i < 200; ++i) ids.insert(open_new());
  EXPECT_EQ(ids.size(), 200u);
  EXPECT_EQ(table.size(), 200u);
}

TEST_F(ChannelTable, ReopenKnownIdOfSamePluginReusesItAndMovesOwnerAndRoute) {
  auto id = open_new();
  clock.now += 5s;
  auto [c, created] = table.open("echo", id, "conn_b", other_route);
  EXPECT_FALSE(created);
  EXPECT_EQ(c.id, id);
  EXPECT_EQ(c.owner, "conn_b");
  EXPECT_EQ(c.route.lock(), other_route);
  EXPECT_EQ(c.last_used, clock.now);
  EXPECT_EQ(table.size(), 1u);
  // The old socket lost the route, the new one has it.
  EXPECT_EQ(table.check(id, "echo", route.get()), route_check::not_open);
  EXPECT_EQ(table.check(id, "echo", other_route.get()), route_check::ok);
  EXPECT_EQ(table.find(id)->owner, "conn_b");
}

TEST_F(ChannelTable, ReopenKeepsAuthStateAndBinding) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, json::object{{"display_name", "Alice"}}));
  auto [c, created] = table.open("echo", id, "conn_b", other_route);
  EXPECT_FALSE(created);
  EXPECT_TRUE(c.authenticated);
  EXPECT_TRUE(c.persistent);
  EXPECT_EQ(c.binding.at("display_name"), "Alice");
}

TEST_F(ChannelTable, AnotherPluginsIdCreatesANewChannel) {
  auto id = open_new("echo");
  auto [c, created] = table.open("other", id, "conn_b", other_route);
  EXPECT_TRUE(created);
  EXPECT_NE(c.id, id);
  EXPECT_TRUE(is_base62_id(c.id, "cch_"));
  EXPECT_EQ(c.plugin_id, "other");
  // The first plugin's channel is untouched.
  ASSERT_NE(table.find(id), nullptr);
  EXPECT_EQ(table.find(id)->plugin_id, "echo");
  EXPECT_EQ(table.find(id)->owner, "conn_a");
  EXPECT_EQ(table.check(id, "echo", route.get()), route_check::ok);
  EXPECT_EQ(table.size(), 2u);
}

TEST_F(ChannelTable, UnknownIdCreatesANewChannel) {
  std::string unknown = "cch_0000000000000000000000";
  auto [c, created] = table.open("echo", unknown, "conn_a", route);
  EXPECT_TRUE(created);
  EXPECT_NE(c.id, unknown);
  EXPECT_EQ(table.find(unknown), nullptr);
}

TEST_F(ChannelTable, RestoredChannelIsReusedWithoutARoute) {
  channel c;
  c.id = "cch_restoredrestoredrestor";
  c.plugin_id = "echo";
  c.owner = "conn_old";
  c.persistent = true;
  c.authenticated = true;
  table.restore(c);
  ASSERT_NE(table.find(c.id), nullptr);
  EXPECT_EQ(table.find(c.id)->last_used, clock.now);
  EXPECT_EQ(table.check(c.id, "echo", route.get()), route_check::not_open);
  auto [again, created] = table.open("echo", c.id, "conn_a", route);
  EXPECT_FALSE(created);
  EXPECT_EQ(again.owner, "conn_a");
  EXPECT_EQ(table.check(c.id, "echo", route.get()), route_check::ok);
}

// check ------------------------------------------------------------------------------------------------------

TEST_F(ChannelTable, CheckOrder) {
  auto id = open_new("echo");
  EXPECT_EQ(table.check("", "echo", route.get()), route_check::id_required);
  EXPECT_EQ(table.check("", "other", nullptr), route_check::id_required);  // before anything else
  EXPECT_EQ(table.check("cch_nope", "echo", route.get()), route_check::not_found);
  EXPECT_EQ(table.check("cch_nope", "other", nullptr), route_check::not_found);  // before other_plugin
  EXPECT_EQ(table.check(id, "other", route.get()), route_check::other_plugin);
  EXPECT_EQ(table.check(id, "other", other_route.get()), route_check::other_plugin);  // before not_open
  EXPECT_EQ(table.check(id, "echo", other_route.get()), route_check::not_open);
  EXPECT_EQ(table.check(id, "echo", nullptr), route_check::not_open);
  EXPECT_EQ(table.check(id, "echo", route.get()), route_check::ok);
}

TEST_F(ChannelTable, CheckCopiesTheChannelOnlyWhenOk) {
  auto id = open_new();
  channel out;
  out.id = "untouched";
  EXPECT_EQ(table.check(id, "echo", other_route.get(), &out), route_check::not_open);
  EXPECT_EQ(out.id, "untouched");
  EXPECT_EQ(table.check(id, "echo", route.get(), &out), route_check::ok);
  EXPECT_EQ(out.id, id);
  EXPECT_EQ(out.plugin_id, "echo");
  EXPECT_EQ(out.owner, "conn_a");
}

TEST_F(ChannelTable, NotOpenAfterTheRouteIsDestroyed) {
  auto id = open_new();
  const channel_route* raw = route.get();
  route.reset();  // the socket died
  EXPECT_EQ(table.check(id, "echo", raw), route_check::not_open);
  EXPECT_TRUE(table.routed("echo").empty());
  EXPECT_EQ(table.counts("echo").first, 0u);
  ASSERT_NE(table.find(id), nullptr);  // the channel itself stays
}

TEST_F(ChannelTable, NotOpenAfterClose) {
  auto id = open_new();
  EXPECT_FALSE(table.close(id, other_route.get()));  // not this socket's route: nothing happens
  EXPECT_EQ(table.check(id, "echo", route.get()), route_check::ok);
  EXPECT_FALSE(table.close("cch_nope", route.get()));
  EXPECT_TRUE(table.close(id, route.get()));
  EXPECT_EQ(table.check(id, "echo", route.get()), route_check::not_open);
  EXPECT_FALSE(table.close(id, route.get()));  // already closed
  ASSERT_NE(table.find(id), nullptr);
}

TEST_F(ChannelTable, CloseKeepsAuthStateAndBinding) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, json::object{{"display_name", "Alice"}}));
  EXPECT_TRUE(table.close(id, route.get()));
  auto* c = table.find(id);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->authenticated);
  EXPECT_EQ(c->binding.at("display_name"), "Alice");
}

TEST_F(ChannelTable, ErrorCodes) {
  EXPECT_EQ(error_code_for(route_check::ok), "");
  EXPECT_EQ(error_code_for(route_check::id_required), "connector_channel_id_required");
  EXPECT_EQ(error_code_for(route_check::not_found), "connection_not_found");
  EXPECT_EQ(error_code_for(route_check::other_plugin), "connector_channel_connector_mismatch");
  EXPECT_EQ(error_code_for(route_check::not_open), "channel_not_open");
}

// expiry -----------------------------------------------------------------------------------------------------

TEST_F(ChannelTable, TemporaryChannelExpiresExactlyAtTheTtl) {
  auto id = open_new();
  clock.now += ttl - 1ms;
  EXPECT_TRUE(table.expire().empty());
  EXPECT_TRUE(present(id));
  clock.now += 1ms;
  EXPECT_EQ(table.expire(), std::vector<std::string>{id});
  EXPECT_FALSE(present(id));
  EXPECT_EQ(table.check(id, "echo", route.get()), route_check::not_found);
  // A reopen of the expired id gets a new one.
  auto [c, created] = table.open("echo", id, "conn_a", route);
  EXPECT_TRUE(created);
  EXPECT_NE(c.id, id);
}

TEST_F(ChannelTable, UseThroughCheckExtendsTheTtl) {
  auto id = open_new();
  clock.now += ttl - 1s;
  ASSERT_EQ(table.check(id, "echo", route.get()), route_check::ok);
  clock.now += ttl - 1ms;  // 2*ttl - 1s - 1ms since open, ttl - 1ms since last use
  EXPECT_TRUE(table.expire().empty());
  EXPECT_TRUE(present(id));
  clock.now += 1ms;
  EXPECT_EQ(table.expire(), std::vector<std::string>{id});
}

TEST_F(ChannelTable, FailedCheckDoesNotExtendTheTtl) {
  auto id = open_new();
  clock.now += ttl - 1s;
  ASSERT_EQ(table.check(id, "echo", other_route.get()), route_check::not_open);
  ASSERT_EQ(table.check(id, "other", route.get()), route_check::other_plugin);
  clock.now += 1s;
  EXPECT_EQ(table.expire(), std::vector<std::string>{id});
}

TEST_F(ChannelTable, OnlyTheUnusedTemporaryChannelsExpire) {
  auto old_one = open_new();
  clock.now += ttl / 2;
  auto young = open_new();
  clock.now += ttl / 2;
  EXPECT_EQ(table.expire(), std::vector<std::string>{old_one});
  EXPECT_TRUE(present(young));
}

TEST_F(ChannelTable, AuthenticatedChannelNeverExpires) {
  auto id = open_new();
  auto c = table.authenticate(id, json::object{{"display_name", "Alice"}});
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->authenticated);
  EXPECT_TRUE(c->persistent);
  clock.now += 24h * 365;
  EXPECT_TRUE(table.expire().empty());
  EXPECT_TRUE(present(id));
}

TEST_F(ChannelTable, LogoutKeepsTheChannelPersistent) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, json::object{{"display_name", "Alice"}}));
  auto c = table.logout(id);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->authenticated);
  EXPECT_TRUE(c->persistent);
  EXPECT_TRUE(c->binding.empty());
  EXPECT_EQ(c->id, id);
  clock.now += 24h * 365;
  EXPECT_TRUE(table.expire().empty());
  ASSERT_TRUE(present(id));
  EXPECT_TRUE(table.find(id)->persistent);
  EXPECT_FALSE(table.find(id)->authenticated);
}

TEST_F(ChannelTable, LogoutOfANeverSignedInChannelLeavesItTemporary) {
  auto id = open_new();
  auto c = table.logout(id);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->persistent);
  clock.now += ttl;
  EXPECT_EQ(table.expire(), std::vector<std::string>{id});
}

TEST_F(ChannelTable, AuthenticateAndLogoutOfUnknownChannel) {
  EXPECT_FALSE(table.authenticate("cch_nope", {}));
  EXPECT_FALSE(table.logout("cch_nope"));
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(ChannelTable, RenewedLoginReplacesTheBinding) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, json::object{{"display_name", "Alice"}, {"account_hint", "a***"}}));
  auto c = table.authenticate(id, json::object{{"display_name", "Bob"}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->binding, (json::object{{"display_name", "Bob"}}));
}

// routed / counts --------------------------------------------------------------------------------------------

TEST_F(ChannelTable, RoutedAndCounts) {
  auto a = open_new("echo");
  auto b = open_new("echo");
  auto other = open_new("other");
  ASSERT_TRUE(table.authenticate(a, {}));
  ASSERT_TRUE(table.close(b, route.get()));
  auto routed = table.routed("echo");
  ASSERT_EQ(routed.size(), 1u);
  EXPECT_EQ(routed.front().id, a);
  EXPECT_EQ(table.counts("echo"), (std::pair<std::size_t, std::size_t>{1, 1}));
  EXPECT_EQ(table.counts("other"), (std::pair<std::size_t, std::size_t>{1, 0}));
  EXPECT_EQ(table.counts("nobody"), (std::pair<std::size_t, std::size_t>{0, 0}));
  (void)other;
}

// temporary caps (leases.max_temporary_per_connector_id / _per_connector) ------------------------------------

TEST(ChannelTableCaps, NewTemporaryChannelsStopAtEachCapAndEveryWayOutOfTemporaryGivesRoomBack) {
  manual_clock clock;
  channel_table table{std::chrono::seconds(60), clock.fn(), {.per_owner = 2, .per_plugin = 3}};
  auto a = std::make_shared<fake_route>("conn_a");
  auto b = std::make_shared<fake_route>("conn_b");
  auto open = [&](const std::string& owner, const std::string& requested = "") {
    auto& route = owner == "conn_a" ? a : b;
    EXPECT_EQ(table.temporary_cap_reached("echo", requested, owner), "");
    return table.open("echo", requested, owner, route).first.id;
  };
  auto a1 = open("conn_a");
  auto a2 = open("conn_a");
  EXPECT_EQ(table.temporary_cap_reached("echo", "", "conn_a"), "owner");
  EXPECT_EQ(table.temporary_cap_reached("echo", "cch_unknown", "conn_a"), "owner");  // would be created
  EXPECT_EQ(table.temporary_cap_reached("echo", a1, "conn_a"), "");                  // reused: never refused
  auto b1 = open("conn_b");
  EXPECT_EQ(table.temporary_cap_reached("echo", "", "conn_b"), "plugin");
  EXPECT_EQ(table.temporary_cap_reached("other", "", "conn_b"), "");  // each plugin has its own
  EXPECT_EQ(table.temporary_of("echo"), 3u);

  // Signing in makes a channel persistent: room for one more.
  ASSERT_TRUE(table.authenticate(a1, {}));
  EXPECT_EQ(table.temporary_owned_by("conn_a"), 1u);
  auto b2 = open("conn_b");
  // A temporary channel reopened by another owner counts for its new owner.
  open("conn_a", b2);
  EXPECT_EQ(table.temporary_owned_by("conn_a"), 2u);
  EXPECT_EQ(table.temporary_owned_by("conn_b"), 1u);
  // Forced deregistration and expiry give room back.
  ASSERT_TRUE(table.erase(a2));
  EXPECT_EQ(table.temporary_owned_by("conn_a"), 1u);
  clock.now += std::chrono::seconds(61);
  table.expire();
  EXPECT_EQ(table.temporary_of("echo"), 0u);
  EXPECT_EQ(table.temporary_owned_by("conn_a"), 0u);
  EXPECT_EQ(table.temporary_owned_by("conn_b"), 0u);
  (void)b1;
}

}  // namespace
}  // namespace xconn::test
