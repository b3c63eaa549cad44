// rate_limiter: a key held until the target's retry_after (at least 1 s) on an injected clock, never cut short by a
// later shorter answer; the awaitable wait honours the injected clock and a hold noted while it waits; threads
// holding and reading at once.
#include <xconn/adapter/rate_limiter.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace rate_limiter_units {

using namespace std::chrono_literals;
using xconn::adapter::rate_limiter;
using clock_type = rate_limiter::clock;

// A clock the test moves: real time plus an offset, or (frozen) a fixed start plus the offset.
struct test_clock {
  const clock_type::time_point start = clock_type::now();
  std::atomic<clock_type::duration::rep> offset{0};
  bool frozen = true;
  clock_type::time_point now() const {
    return (frozen ? start : clock_type::now()) + clock_type::duration(offset.load());
  }
  void advance(clock_type::duration d) { offset += d.count(); }
};

TEST(rate_limiter, a_key_is_held_until_the_targets_retry_after_and_no_longer) {
  test_clock t;
  rate_limiter limits([&] { return t.now(); });
  EXPECT_FALSE(limits.held("bot-1"));
  limits.hold("bot-1", 5s);
  EXPECT_EQ(limits.until("bot-1"), t.start + 5s);
  EXPECT_FALSE(limits.held("bot-2")) << "keys are held apart";
  t.advance(4900ms);
  EXPECT_TRUE(limits.held("bot-1"));
  EXPECT_EQ(limits.left("bot-1"), 100ms);
  t.advance(100ms);
  EXPECT_FALSE(limits.held("bot-1"));
  EXPECT_EQ(limits.until("bot-1"), std::nullopt);
  EXPECT_EQ(limits.left("bot-1"), clock_type::duration::zero());
}

TEST(rate_limiter, a_refusal_without_a_wait_holds_at_least_one_second) {
  test_clock t;
  rate_limiter limits([&] { return t.now(); });
  limits.hold("bot-1", 0s);
  limits.hold("bot-2", -3s);
  EXPECT_EQ(limits.until("bot-1"), t.start + 1s);
  EXPECT_EQ(limits.until("bot-2"), t.start + 1s);
  t.advance(999ms);
  EXPECT_TRUE(limits.held("bot-1"));
}

TEST(rate_limiter, a_later_shorter_answer_never_cuts_a_longer_hold_short_and_a_longer_one_extends_it) {
  test_clock t;
  rate_limiter limits([&] { return t.now(); });
  limits.hold("bot-1", 30s);
  t.advance(1s);
  limits.hold("bot-1", 2s);
  EXPECT_EQ(limits.until("bot-1"), t.start + 30s);
  limits.hold("bot-1", 60s);
  EXPECT_EQ(limits.until("bot-1"), t.start + 61s);
}

// Runs wait(key) on its own io_context, with meanwhile run on that loop after its delay when given, and returns how
// long the wait took in real time.
clock_type::duration timed_wait(const rate_limiter& limits, const std::string& key, std::function<void()> meanwhile = {},
                                clock_type::duration delay = {}) {
  boost::asio::io_context io;
  bool done = false;
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { co_await limits.wait(key); done = true; }, boost::asio::detached);
  boost::asio::steady_timer side(io, delay);
  if (meanwhile) side.async_wait([&](auto) { meanwhile(); });
  auto began = clock_type::now();
  io.run_for(5s);
  EXPECT_TRUE(done);
  return clock_type::now() - began;
}

TEST(rate_limiter, waiting_on_a_free_key_returns_at_once) {
  rate_limiter limits;
  EXPECT_LT(timed_wait(limits, "bot-1"), 200ms);
}

TEST(rate_limiter, the_wait_reads_the_injected_clock) {
  test_clock t;
  t.frozen = false;
  rate_limiter limits([&] { return t.now(); });
  limits.hold("bot-1", 1s);
  t.advance(900ms);  // 100 ms of the hold left on the injected clock: the wait is that, not the second
  auto took = timed_wait(limits, "bot-1");
  EXPECT_GE(took, 95ms);
  EXPECT_LT(took, 800ms);
}

TEST(rate_limiter, a_hold_noted_while_waiting_is_waited_out_too) {
  test_clock t;
  t.frozen = false;
  rate_limiter limits([&] { return t.now(); });
  limits.hold("bot-1", 1s);
  t.advance(950ms);  // 50 ms left
  auto took = timed_wait(
      limits, "bot-1",
      [&] {
        limits.hold("bot-1", 1s);  // another 429 answered meanwhile
        t.advance(900ms);          // of which 100 ms are left
      },
      20ms);
  EXPECT_GE(took, 115ms) << "the first hold alone ended after 50 ms";
  EXPECT_LT(took, 900ms);
}

// Threads note holds of growing and shrinking length on a few keys while others read: a key's end never moves
// back, and it ends at the longest hold.
TEST(rate_limiter, threads_holding_and_reading_at_once_keep_each_keys_longest_hold) {
  test_clock t;
  rate_limiter limits([&] { return t.now(); });
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  std::atomic<bool> writing{true};
  std::atomic<int> moved_back{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back([&] {
      std::vector<clock_type::time_point> seen(keys.size());
      while (writing)
        for (std::size_t k = 0; k < keys.size(); ++k)
          if (auto until = limits.until(keys[k])) {
            if (*until < seen[k]) ++moved_back;
            seen[k] = *until;
          }
    });
  auto key_of = [&](int w, int i) { return keys[(w + i) % keys.size()]; };
  auto wait_of = [](int w, int i) { return std::chrono::seconds((i * 7 + w) % 120); };
  std::map<std::string, std::chrono::seconds> longest;
  for (int w = 0; w < 6; ++w)
    for (int i = 0; i < 2000; ++i) longest[key_of(w, i)] = std::max(longest[key_of(w, i)], wait_of(w, i));
  std::vector<std::thread> writers;
  for (int w = 0; w < 6; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 2000; ++i) limits.hold(key_of(w, i), wait_of(w, i));
    });
  for (auto& w : writers) w.join();
  writing = false;
  for (auto& r : readers) r.join();
  EXPECT_EQ(moved_back.load(), 0);
  for (const auto& k : keys) EXPECT_EQ(limits.until(k), t.start + longest[k]) << k;
}

}  // namespace rate_limiter_units
