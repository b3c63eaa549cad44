// One socket's outbox against server.max_outbox_bytes, with the strand replaced by a queue the test runs by hand:
// deliveries stop at the budget (at most one frame past it, whatever the threads), resume only below a quarter, and
// a channel waiting for the drain is told once, never inline, and never after its socket went.
#include "core/messaging/outbox_budget.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace xconn {
namespace {

struct strand_queue {
  std::vector<std::function<void()>> posted;
  outbox_budget::post_fn post() {
    return [this](std::function<void()> fn) { posted.push_back(std::move(fn)); };
  }
  int run() {
    auto now = std::move(posted);
    posted.clear();
    for (auto& fn : now) fn();
    return static_cast<int>(now.size());
  }
};

TEST(outbox_budget, deliveries_stop_at_the_budget_and_resume_only_below_a_quarter) {
  strand_queue strand;
  outbox_budget b(1000, strand.post());
  EXPECT_TRUE(b.try_add(600));
  EXPECT_TRUE(b.try_add(600)) << "below the budget a frame is admitted, even one that crosses it";
  EXPECT_EQ(b.bytes(), 1200u);
  EXPECT_FALSE(b.try_add(1)) << "at or past the budget nothing more is admitted";
  EXPECT_TRUE(b.holding());
  b.remove(600);  // 600 left: under the budget but above a quarter
  EXPECT_TRUE(b.holding());
  EXPECT_FALSE(b.try_add(1)) << "the hold lasts until a quarter, not just below the budget";
  b.remove(400);  // 200 left: below a quarter
  EXPECT_FALSE(b.holding());
  EXPECT_TRUE(b.try_add(100));
  EXPECT_EQ(b.peak(), 1200u);
}

TEST(outbox_budget, other_frames_count_but_are_never_refused) {
  strand_queue strand;
  outbox_budget b(1000, strand.post());
  b.add(5000);  // an answer bigger than the whole budget
  EXPECT_EQ(b.bytes(), 5000u);
  EXPECT_FALSE(b.try_add(10)) << "a delivery waits behind it";
  b.add(10);
  EXPECT_EQ(b.bytes(), 5010u);
  EXPECT_EQ(b.peak(), 5010u);
}

TEST(outbox_budget, a_waiter_runs_once_on_the_strand_when_the_hold_ends_and_at_once_when_there_is_none) {
  strand_queue strand;
  outbox_budget b(1000, strand.post());
  int woken = 0;
  b.when_drained([&] { ++woken; });
  EXPECT_EQ(woken, 0) << "never inline: the caller may hold a lock the waiter takes";
  EXPECT_EQ(strand.run(), 1);
  EXPECT_EQ(woken, 1);

  ASSERT_TRUE(b.try_add(1000));
  ASSERT_FALSE(b.try_add(1));
  b.when_drained([&] { ++woken; });
  b.remove(500);
  EXPECT_EQ(strand.run(), 0) << "500 is not below a quarter";
  b.remove(400);
  EXPECT_EQ(strand.run(), 1);
  EXPECT_EQ(woken, 2);
  b.remove(100);
  EXPECT_EQ(strand.run(), 0) << "told once";
}

TEST(outbox_budget, a_hold_met_on_a_queue_already_drained_ends_at_once) {
  // The writes drained it between a delivery's look and its hold: nothing would end that hold later.
  strand_queue strand;
  outbox_budget b(1000, strand.post());
  ASSERT_TRUE(b.try_add(1000));
  ASSERT_FALSE(b.try_add(1));
  b.remove(1000);
  EXPECT_FALSE(b.holding());
  int woken = 0;
  b.when_drained([&] { ++woken; });
  strand.run();
  EXPECT_EQ(woken, 1);
}

TEST(outbox_budget, a_socket_that_goes_drops_its_waiters_unrun) {
  strand_queue strand;
  outbox_budget b(1000, strand.post());
  ASSERT_TRUE(b.try_add(1000));
  ASSERT_FALSE(b.try_add(1));
  int woken = 0;
  b.when_drained([&] { ++woken; });
  b.forget_waiters();
  b.remove(1000);
  b.when_drained([&] { ++woken; });
  EXPECT_EQ(strand.run(), 0);
  EXPECT_EQ(woken, 0);
}

TEST(outbox_budget, threads_racing_for_the_last_room_pass_the_budget_by_one_frame_at_most) {
  std::mutex m;
  std::vector<std::function<void()>> posted;
  outbox_budget b(64 * 1024, [&](std::function<void()> fn) {
    std::lock_guard lock(m);
    posted.push_back(std::move(fn));
  });
  constexpr std::uint64_t frame = 6000;
  std::vector<std::thread> threads;
  std::atomic<int> admitted{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        if (b.try_add(frame)) ++admitted;
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(b.peak(), 64 * 1024 + frame - 1);
  EXPECT_EQ(b.bytes(), admitted.load() * frame);
  EXPECT_TRUE(b.holding());
}

}  // namespace
}  // namespace xconn
