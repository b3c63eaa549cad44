// body_budget: the public-body bytes of a server, taken per request and given back when the request is done.
#include "core/context/body_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

namespace xconn {
namespace body_budget_test {

TEST(BodyBudget, takes_up_to_the_limit_and_gives_back_when_the_grant_ends) {
  body_budget b;
  auto first = b.take(600, 1000);
  ASSERT_TRUE(first);
  EXPECT_EQ(b.in_use(), 600u);
  EXPECT_FALSE(b.take(401, 1000)) << "one byte past the limit";
  EXPECT_EQ(b.in_use(), 600u) << "a refusal takes nothing";
  {
    auto exact = b.take(400, 1000);
    ASSERT_TRUE(exact) << "exactly up to the limit";
    EXPECT_EQ(b.in_use(), 1000u);
    EXPECT_FALSE(b.take(1, 1000));
  }
  EXPECT_EQ(b.in_use(), 600u);
  first.reset();
  EXPECT_EQ(b.in_use(), 0u);
  EXPECT_TRUE(b.take(1000, 1000));
  EXPECT_EQ(b.in_use(), 0u) << "an unkept grant gives its bytes back at once";
}

TEST(BodyBudget, huge_requests_do_not_wrap_around) {
  body_budget b;
  auto some = b.take(10, 1000);
  ASSERT_TRUE(some);
  EXPECT_FALSE(b.take(std::numeric_limits<std::uint64_t>::max(), 1000));
  EXPECT_FALSE(b.take(std::numeric_limits<std::uint64_t>::max() - 5, std::numeric_limits<std::uint64_t>::max()));
  EXPECT_FALSE(b.take(1001, 1000));
  EXPECT_EQ(b.in_use(), 10u);
}

TEST(BodyBudget, a_moved_grant_gives_back_once) {
  body_budget b;
  auto a = b.take(100, 1000);
  ASSERT_TRUE(a);
  std::optional<body_budget::grant> moved(std::move(*a));
  a.reset();
  EXPECT_EQ(b.in_use(), 100u) << "the moved-from grant holds nothing";
  auto c = b.take(200, 1000);
  ASSERT_TRUE(c);
  *moved = std::move(*c);  // the 100 go back, the 200 are held by moved
  EXPECT_EQ(b.in_use(), 200u);
  c.reset();
  EXPECT_EQ(b.in_use(), 200u);
  moved.reset();
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(BodyBudget, racing_takers_never_hold_more_than_the_limit) {
  body_budget b;
  constexpr std::uint64_t limit = 64;
  std::atomic<std::uint64_t> worst{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        auto g = b.take(16, limit);
        auto now = b.in_use();
        auto seen = worst.load();
        while (now > seen && !worst.compare_exchange_weak(seen, now)) {
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_LE(worst.load(), limit);
  EXPECT_EQ(b.in_use(), 0u);
}

}  // namespace body_budget_test
}  // namespace xconn
