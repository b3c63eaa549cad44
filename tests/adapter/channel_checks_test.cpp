// A restored channel's life cycle through a real host table: connected only once the target took its credentials,
// revoked or expired on a refusal, degraded (target_unreachable) while the target does not answer, with checks again
// until it does and the later status pushed, the health board's "checks" source set meanwhile.
#include "recording_host.hpp"

#include <xconn/adapter/channel_checks.hpp>

#include <gtest/gtest.h>

#include <deque>

namespace {

using xconn::adapter::check_verdict;
using xconn::adapter_test::exposed_adapter;
using xconn::adapter_test::recording_host;
using namespace std::chrono_literals;

// The target's answers, one per verify, the last repeated; and the channels bound.
struct fake_target {
  std::mutex mutex;
  std::deque<check_verdict> answers;
  std::vector<std::string> verified;
  int asked = 0;

  boost::asio::awaitable<check_verdict> verify(const std::string&) {
    std::lock_guard lock(mutex);
    ++asked;
    auto v = answers.front();
    if (answers.size() > 1) answers.pop_front();
    co_return v;
  }
};

struct checks_fixture {
  recording_host host;
  fake_target target;
  exposed_adapter adapter{host.host()};
  xconn::adapter::health_board board{host.host()};
  xconn::adapter::channel_checks checks{
      adapter, board, [this](const std::string& c) { return target.verify(c); },
      [this](const std::string& c) {
        std::lock_guard lock(target.mutex);
        target.verified.push_back(c);
      }};

  checks_fixture(std::initializer_list<check_verdict> answers) : target{} {
    target.answers = answers;
    adapter.start(host.completion_for(host.new_call()));
  }
  ~checks_fixture() { adapter.halt(); }

  // The restore's answer, as the restore hook gives it.
  std::string restore(const std::string& channel) {
    auto& call = host.new_call();
    adapter.spawn([](xconn::adapter::channel_checks& c, std::string ch,
                     xconn::sdk::completion done) -> boost::asio::awaitable<void> {
      done.ok(co_await c.restore(ch));
    }(checks, channel, host.completion_for(call)));
    EXPECT_TRUE(host.wait_done(call));
    return call.call.json;
  }
  std::vector<std::string> verified() {
    std::lock_guard lock(target.mutex);
    return target.verified;
  }
};

TEST(channel_checks, accepted_shows_connected_after_binding) {
  checks_fixture f{check_verdict::accepted};
  EXPECT_EQ(f.restore("ch1"), R"({"status":"connected"})");
  EXPECT_EQ(f.verified(), std::vector<std::string>{"ch1"});
  EXPECT_TRUE(f.host.read([](recording_host& h) { return h.health_.empty(); }));
}

TEST(channel_checks, a_refusal_revokes_and_nothing_left_expires) {
  checks_fixture f{check_verdict::refused};
  EXPECT_EQ(f.restore("ch1"), R"({"status":"revoked"})");
  checks_fixture g{check_verdict::expired};
  EXPECT_EQ(g.restore("ch1"), R"({"status":"expired"})");
  EXPECT_TRUE(f.verified().empty());
  EXPECT_FALSE(f.checks.awaiting("ch1"));
}

TEST(channel_checks, unreachable_degrades_then_connects_once_the_target_answers) {
  checks_fixture f{check_verdict::unreachable, check_verdict::accepted};
  EXPECT_EQ(f.restore("ch1"), R"({"status":"degraded","reason":"target_unreachable"})");
  EXPECT_TRUE(f.checks.awaiting("ch1"));
  EXPECT_TRUE(f.verified().empty());
  // The first check again comes 1 s later.
  ASSERT_TRUE(f.host.wait_for([](recording_host& h) { return !h.reports_.empty(); }, 4s));
  EXPECT_EQ(f.host.read([](recording_host& h) { return h.reports_; }),
            std::vector<std::string>{R"(ch1 {"status":"connected"})"});
  EXPECT_EQ(f.verified(), std::vector<std::string>{"ch1"});
  EXPECT_FALSE(f.checks.awaiting("ch1"));
  EXPECT_EQ(f.host.read([](recording_host& h) { return h.health_; }),
            (std::vector<std::string>{"degraded:target_unreachable", "healthy:"}));
}

TEST(channel_checks, unreachable_then_refused_pushes_revoked) {
  checks_fixture f{check_verdict::unreachable, check_verdict::refused};
  EXPECT_EQ(f.restore("ch1"), R"({"status":"degraded","reason":"target_unreachable"})");
  ASSERT_TRUE(f.host.wait_for([](recording_host& h) { return !h.reports_.empty(); }, 4s));
  EXPECT_EQ(f.host.read([](recording_host& h) { return h.reports_.front(); }), R"(ch1 {"status":"revoked"})");
  EXPECT_TRUE(f.verified().empty());
}

TEST(channel_checks, a_forgotten_channel_is_checked_no_more) {
  checks_fixture f{check_verdict::unreachable, check_verdict::accepted};
  f.restore("ch1");
  f.checks.forget("ch1");
  EXPECT_FALSE(f.checks.awaiting("ch1"));
  // Past the first check's time: it found the channel gone and asked the target nothing.
  EXPECT_FALSE(f.host.wait_for([](recording_host& h) { return !h.reports_.empty(); }, 1500ms));
  std::lock_guard lock(f.target.mutex);
  EXPECT_EQ(f.target.asked, 1);
}

}  // namespace
