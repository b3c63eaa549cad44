#include "core/channels/channel_table.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace xconn {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

// A data-plane session stand-in: the table only compares and weakly holds it.
class fake_route : public channel_route {
 public:
  explicit fake_route(std::string connector_id = "conn_a") : connector_id_(std::move(connector_id)) {}
  void push(std::string packet) override { pushed.push_back(std::move(packet)); }
  void push(std::string packet, std::function<void(bool)> written) override {
    pushed.push_back(std::move(packet));
    written(true);
  }
  const std::vector<std::string>& profiles() const override { return profiles_; }
  const std::string& connector_id() const override { return connector_id_; }
  std::vector<std::string> pushed;

 private:
  std::vector<std::string> profiles_{"xagent.im.v2"};
  std::string connector_id_;
};

// A steady clock the test moves by hand.
struct manual_clock {
  channel_table::clock::time_point now = channel_table::clock::time_point{} + 1000h;
  channel_table::now_fn fn() {
    return [this] { return now; };
  }
};

bool is_base62_id(const std::string& id, std::string_view prefix, std::size_t n = 22) {
  if (id.size() != prefix.size() + n || id.rfind(prefix, 0) != 0) return false;
  return std::all_of(id.begin() + static_cast<std::ptrdiff_t>(prefix.size()), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

constexpr std::chrono::seconds ttl{60};

class ChannelTable : public ::testing::Test {
 protected:
  manual_clock clock;
  channel_table table{ttl, clock.fn()};
  std::shared_ptr<fake_route> route = std::make_shared<fake_route>("conn_a");
  std::shared_ptr<fake_route> other_route = std::make_shared<fake_route>("conn_b");

  std::string open_new(std::string_view plugin = "echo") {
    auto [c, created] = table.open(plugin, "", "conn_a", route);
    EXPECT_TRUE(created);
    return c.id;
  }
  bool present(const std::string& id) const { return table.find(id) != nullptr; }
};

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

// records ----------------------------------------------------------------------------------------------------

TEST_F(ChannelTable, RecordRoundTrip) {
  auto id = open_new();
  auto binding = json::object{{"display_name", "Alice"}, {"account_hint", "a***@x"},
                              {"tools", json::array{json::object{{"tool_id", "t"}, {"status", "available"}}}}};
  auto c = table.authenticate(id, binding);
  ASSERT_TRUE(c);
  auto text = json::serialize(c->to_record());
  auto back = channel::from_record(id, text);
  ASSERT_TRUE(back) << text;
  EXPECT_EQ(back->id, id);
  EXPECT_EQ(back->plugin_id, "echo");
  EXPECT_EQ(back->owner, "conn_a");
  EXPECT_TRUE(back->authenticated);
  EXPECT_TRUE(back->persistent);
  EXPECT_EQ(back->binding, binding);
  EXPECT_EQ(back->created_at, c->created_at);
  EXPECT_TRUE(back->route.expired());
}

TEST_F(ChannelTable, RecordHoldsNoRouteNoClockAndNoBindingWhenSignedOut) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, json::object{{"display_name", "Alice"}}));
  auto c = table.logout(id);
  ASSERT_TRUE(c);
  auto r = c->to_record();
  EXPECT_FALSE(r.contains("binding"));
  EXPECT_FALSE(r.contains("route"));
  EXPECT_FALSE(r.contains("last_used"));
  auto back = channel::from_record(id, json::serialize(r));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->authenticated);
  EXPECT_TRUE(back->persistent);  // a record exists only for a persistent channel
  EXPECT_TRUE(back->binding.empty());
}

TEST(ChannelRecord, RefusesMalformedRecords) {
  const char* bad[] = {
      "",
      "not json",
      "[]",
      "\"x\"",
      "null",
      "{",
      R"({"owner":"conn_a","authenticated":true})",                     // no plugin_id
      R"({"plugin_id":"echo","authenticated":true})",                   // no owner
      R"({"plugin_id":"echo","owner":"conn_a"})",                       // no authenticated
      R"({"plugin_id":7,"owner":"conn_a","authenticated":true})",       // wrong types
      R"({"plugin_id":"echo","owner":null,"authenticated":true})",
      R"({"plugin_id":"echo","owner":"conn_a","authenticated":"yes"})",
  };
  for (auto* text : bad) EXPECT_FALSE(channel::from_record("cch_x", text)) << text;
  auto ok = channel::from_record("cch_x", R"({"plugin_id":"echo","owner":"conn_a","authenticated":false})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->created_at, 0);
}

TEST_F(ChannelTable, RestoredRecordBehavesLikeAPersistentChannel) {
  auto c = channel::from_record("cch_restoredrestoredrestor",
                                R"({"plugin_id":"echo","owner":"conn_a","authenticated":false,"created_at":5})");
  ASSERT_TRUE(c);
  table.restore(*c);
  clock.now += 24h * 30;
  EXPECT_TRUE(table.expire().empty());
  EXPECT_TRUE(present("cch_restoredrestoredrestor"));
}

// auth runs --------------------------------------------------------------------------------------------------

TEST_F(ChannelTable, BeginAuthIssuesRandomAuthIds) {
  auto id = open_new();
  auto a = table.begin_auth(id, "echo_qr");
  auto b = table.begin_auth(id, "echo_qr");
  EXPECT_TRUE(is_base62_id(a, "auth_")) << a;
  EXPECT_TRUE(is_base62_id(b, "auth_")) << b;
  EXPECT_NE(a, b);
  auto run = table.find_auth(id, a);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->id, a);
  EXPECT_EQ(run->channel_id, id);
  EXPECT_EQ(run->flow_id, "echo_qr");
  EXPECT_EQ(run->state, auth_run_state::running);
  EXPECT_TRUE(run->failure_code.empty());
}

TEST_F(ChannelTable, FindAuthOnlyOnItsChannel) {
  auto one = open_new();
  auto two = open_new();
  auto run = table.begin_auth(one, "echo_qr");
  EXPECT_TRUE(table.find_auth(one, run));
  EXPECT_FALSE(table.find_auth(two, run));
  EXPECT_FALSE(table.find_auth("", run));
  EXPECT_FALSE(table.find_auth(one, "auth_nope"));
  EXPECT_FALSE(table.find_auth(one, ""));
}

TEST_F(ChannelTable, EndAuthStates) {
  auto id = open_new();
  auto ok = table.begin_auth(id, "f");
  auto failed = table.begin_auth(id, "f");
  auto canceled = table.begin_auth(id, "f");
  EXPECT_TRUE(table.auth_running(id));
  table.end_auth(ok, auth_run_state::authenticated);
  table.end_auth(failed, auth_run_state::failed, "invalid_credentials");
  table.end_auth(canceled, auth_run_state::canceled);
  table.end_auth("auth_nope", auth_run_state::failed, "x");  // unknown: nothing happens
  EXPECT_EQ(table.find_auth(id, ok)->state, auth_run_state::authenticated);
  EXPECT_EQ(table.find_auth(id, failed)->state, auth_run_state::failed);
  EXPECT_EQ(table.find_auth(id, failed)->failure_code, "invalid_credentials");
  EXPECT_EQ(table.find_auth(id, canceled)->state, auth_run_state::canceled);
  EXPECT_FALSE(table.auth_running(id));
  EXPECT_FALSE(table.find_auth(id, "auth_nope"));
}

TEST_F(ChannelTable, AuthRunningIsPerChannel) {
  auto one = open_new();
  auto two = open_new();
  EXPECT_FALSE(table.auth_running(one));
  auto run = table.begin_auth(one, "f");
  EXPECT_TRUE(table.auth_running(one));
  EXPECT_FALSE(table.auth_running(two));
  table.end_auth(run, auth_run_state::failed, "x");
  EXPECT_FALSE(table.auth_running(one));
}

TEST_F(ChannelTable, LogoutCancelsRunningRunsOnly) {
  auto id = open_new();
  auto other = open_new();
  auto done = table.begin_auth(id, "f");
  table.end_auth(done, auth_run_state::authenticated);
  ASSERT_TRUE(table.authenticate(id, {}));
  auto running = table.begin_auth(id, "f");
  auto elsewhere = table.begin_auth(other, "f");
  ASSERT_TRUE(table.logout(id));
  EXPECT_EQ(table.find_auth(id, running)->state, auth_run_state::canceled);
  EXPECT_EQ(table.find_auth(id, done)->state, auth_run_state::authenticated);  // ended runs keep their outcome
  EXPECT_EQ(table.find_auth(other, elsewhere)->state, auth_run_state::running);
  EXPECT_FALSE(table.auth_running(id));
  EXPECT_TRUE(table.auth_running(other));
}

TEST_F(ChannelTable, EndedRunsAreDroppedAfterEndedRunKept) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, {}));  // persistent: the channel itself stays
  auto run = table.begin_auth(id, "f");
  table.end_auth(run, auth_run_state::failed, "invalid_credentials");
  clock.now += channel_table::ended_run_kept - 1ms;
  table.expire();
  ASSERT_TRUE(table.find_auth(id, run));  // this also marks it used
  clock.now += channel_table::ended_run_kept - 1ms;
  table.expire();
  EXPECT_TRUE(table.find_auth(id, run));
  clock.now += channel_table::ended_run_kept;
  table.expire();
  EXPECT_FALSE(table.find_auth(id, run));
  EXPECT_TRUE(present(id));
}

TEST_F(ChannelTable, RunningRunSurvivesEndedRunKeptWhileAskedAbout) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, {}));
  auto run = table.begin_auth(id, "f");
  for (int i = 0; i < 3; ++i) {
    clock.now += channel_table::ended_run_kept - 1s;
    table.expire();
    ASSERT_TRUE(table.find_auth(id, run)) << i;
    EXPECT_TRUE(table.auth_running(id));
  }
}

TEST(ChannelTableLongTtl, EndedRunsGoAfterEndedRunKeptRunningOnesAfterTheTtl) {
  manual_clock clock;
  constexpr std::chrono::seconds long_ttl = 3h;
  channel_table table(long_ttl, clock.fn());
  auto route = std::make_shared<fake_route>();
  auto id = table.open("echo", "", "conn_a", route).first.id;
  auto ended = table.begin_auth(id, "f");
  auto running = table.begin_auth(id, "f");
  table.end_auth(ended, auth_run_state::canceled);
  clock.now += channel_table::ended_run_kept - 1ms;
  ASSERT_EQ(table.check(id, "echo", route.get()), route_check::ok);  // the channel is in use
  table.expire();
  ASSERT_TRUE(table.find_auth(id, ended));  // asking marks it used again
  clock.now += channel_table::ended_run_kept;
  table.expire();
  EXPECT_FALSE(table.find_auth(id, ended));
  EXPECT_TRUE(table.auth_running(id));
  ASSERT_EQ(table.check(id, "echo", route.get()), route_check::ok);
  clock.now += long_ttl - 2 * channel_table::ended_run_kept;  // ttl - 1ms since the run began
  table.expire();
  ASSERT_EQ(table.check(id, "echo", route.get()), route_check::ok);
  EXPECT_TRUE(table.auth_running(id));
  clock.now += 1ms;
  table.expire();
  EXPECT_FALSE(table.auth_running(id));  // abandoned: nobody asked about it for the ttl
  EXPECT_FALSE(table.find_auth(id, running));
}

TEST_F(ChannelTable, RunsOfAnExpiredChannelAreDropped) {
  auto id = open_new();
  auto run = table.begin_auth(id, "f");
  clock.now += ttl;
  EXPECT_EQ(table.expire(), std::vector<std::string>{id});
  EXPECT_FALSE(table.find_auth(id, run));
  EXPECT_FALSE(table.auth_running(id));
}

}  // namespace
}  // namespace xconn
