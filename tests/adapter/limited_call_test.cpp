// A call through the rate limiter (limited_call.hpp) on a real io_context: a rate-limit limited_answer_t holds the key for
// every later call, and a call with a deadline is asked again only while the target's wait ends before it.
#include <xconn/adapter/limited_call.hpp>

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <deque>

namespace limited_call_test {

using namespace std::chrono_literals;
using xconn::adapter::rate_limiter;

struct limited_answer_t {
  int status = 200;
  int retry_after_s = 0;
};

std::optional<std::chrono::seconds> limited_retry_after(const limited_answer_t& a) {
  return a.status == 429 ? std::optional(std::chrono::seconds(a.retry_after_s)) : std::nullopt;
}

// The target's answers in order (the last repeated), and how often it was asked.
struct limited_target {
  std::deque<limited_answer_t> answers;
  int asked = 0;
  boost::asio::awaitable<limited_answer_t> call() {
    ++asked;
    auto a = answers.front();
    if (answers.size() > 1) answers.pop_front();
    co_return a;
  }
};

// The call as limited_call makes it (a named type: a coroutine template's frame must not hold a lambda's type).
struct call_of {
  limited_target* target;
  boost::asio::awaitable<limited_answer_t> operator()() const { return target->call(); }
};

template <class Make>
limited_answer_t run_limited(Make make) {
  boost::asio::io_context io;
  limited_answer_t got{-1, 0};
  boost::asio::co_spawn(io, [&]() -> boost::asio::awaitable<void> { got = co_await make(); }, boost::asio::detached);
  io.run_for(10s);
  return got;
}

TEST(LimitedCall, ARateLimitHoldsTheKeyForLaterCalls) {
  rate_limiter limits;
  limited_target target{{{429, 30}}};
  auto got = run_limited([&] { return xconn::adapter::limited_call(limits, "k", call_of{&target}, limited_retry_after); });
  EXPECT_EQ(got.status, 429);
  EXPECT_EQ(target.asked, 1);
  EXPECT_TRUE(limits.held("k"));
  EXPECT_GT(limits.left("k"), 29s);
  EXPECT_FALSE(limits.held("other"));
}

TEST(LimitedCall, AShortWaitWithinTheDeadlineIsWaitedOutAndAskedAgain) {
  rate_limiter limits;
  limited_target target{{{429, 1}, {200, 0}}};
  auto start = std::chrono::steady_clock::now();
  auto got = run_limited([&] {
    return xconn::adapter::limited_call_until(limits, "k", start + 5s, call_of{&target}, limited_retry_after);
  });
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(target.asked, 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);  // the hold was waited out before the second call
}

TEST(LimitedCall, AWaitPastTheDeadlineAnswersTheRateLimit) {
  rate_limiter limits;
  limited_target target{{{429, 10}, {200, 0}}};
  auto start = std::chrono::steady_clock::now();
  auto got = run_limited([&] {
    return xconn::adapter::limited_call_until(limits, "k", start + 5s, call_of{&target}, limited_retry_after);
  });
  EXPECT_EQ(got.status, 429);
  EXPECT_EQ(target.asked, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

}  // namespace limited_call_test
