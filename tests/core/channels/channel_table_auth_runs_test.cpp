// Auth runs in the channel table: random auth ids, runs per channel, their end states, and how long ended and
// abandoned runs are kept.
#include "core/channels/channel_table.hpp"

#include "core/channels/auth_flow.hpp"

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

// A plugin's unauthenticated answer ends the run as its expired answer does: the channel stops showing
// authenticating at once, and the run's record goes after ended_run_kept (a run left running would be kept, and
// keep the channel authenticating, as long as it is asked about).
TEST_F(ChannelTable, AnUnauthenticatedAnswerEndsTheRunLikeExpired) {
  for (const char* answer : {"expired", "unauthenticated"}) {
    auto id = open_new();
    ASSERT_TRUE(table.authenticate(id, {}));
    ASSERT_TRUE(table.logout(id));
    auto run = table.begin_auth(id, "f");
    ASSERT_TRUE(table.auth_running(id));
    auto ended = run_ended_without_sign_in(answer);
    ASSERT_TRUE(ended) << answer;
    table.end_auth(run, *ended);
    EXPECT_FALSE(table.auth_running(id)) << answer;
    EXPECT_NE(table.find_auth(id, run)->state, auth_run_state::running) << answer;
    clock.now += channel_table::ended_run_kept + 1ms;
    table.expire();
    EXPECT_FALSE(table.find_auth(id, run)) << answer;
    EXPECT_TRUE(present(id));
  }
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

TEST_F(ChannelTable, AnErasedChannelTakesItsRunsAndOnlyThem) {
  auto gone = open_new();
  auto kept = open_new();
  std::vector<std::string> gone_runs, kept_runs;
  for (int i = 0; i < 3; ++i) {
    gone_runs.push_back(table.begin_auth(gone, "f"));
    kept_runs.push_back(table.begin_auth(kept, "f"));
  }
  ASSERT_TRUE(table.erase(gone));
  EXPECT_FALSE(table.auth_running(gone));
  for (const auto& run : gone_runs) EXPECT_FALSE(table.find_auth(gone, run));
  for (const auto& run : kept_runs) EXPECT_EQ(table.find_auth(kept, run)->state, auth_run_state::running);
  EXPECT_TRUE(table.auth_running(kept));
  ASSERT_TRUE(table.logout(kept));  // the kept channel's index still finds every run of it
  for (const auto& run : kept_runs) EXPECT_EQ(table.find_auth(kept, run)->state, auth_run_state::canceled);
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
}  // namespace xconn::test
