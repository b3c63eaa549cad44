// log_interval: the first occurrence is written at once, the rest at most once per interval with their count, and a
// flush after the interval writes what a burst left without waiting for another occurrence; nothing is lost.
#include "core/base/log_interval.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace xconn {
namespace {

using namespace std::chrono_literals;

TEST(LogInterval, OneLinePerIntervalWithTheCountSinceTheLastAndAFlushForTheTail) {
  log_interval every(10s);
  const auto t0 = log_interval::clock::time_point{} + 1h;
  EXPECT_EQ(every.count(t0), 1u) << "the first is written at once";
  EXPECT_EQ(every.flush(t0 + 1s), 0u) << "nothing pending";
  for (int i = 0; i < 999; ++i) EXPECT_EQ(every.count(t0 + 1s), 0u);
  EXPECT_EQ(every.flush(t0 + 9s), 0u) << "within the interval";
  EXPECT_EQ(every.count(t0 + 10s), 1000u) << "999 held back and this one";
  EXPECT_EQ(every.count(t0 + 11s), 0u);
  EXPECT_EQ(every.flush(t0 + 20s), 1u) << "the burst's tail, without another occurrence";
  EXPECT_EQ(every.flush(t0 + 40s), 0u);
  EXPECT_EQ(every.count(t0 + 41s), 1u) << "an interval after the last line: at once";
}

TEST(LogInterval, CountsFromManyThreadsAddUp) {
  log_interval every(1h);
  std::atomic<std::uint64_t> written = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) written += every.count();
    });
  for (auto& t : threads) t.join();
  written += every.flush(log_interval::clock::now() + 2h);
  EXPECT_EQ(written.load(), 40000u);
}

}  // namespace
}  // namespace xconn
