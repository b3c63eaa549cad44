// pending_answers on a real io_context: a keyed request is settled with its answer (and built up by update first),
// requests under other keys stay waiting, the oldest is settled first in FIFO use, a deadline answers nullopt, and
// settle_all answers every waiter as its answer stands.
#include <xconn/adapter/pending_answers.hpp>

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <string>

namespace {

namespace asio = boost::asio;
using xconn::adapter::pending_answers;
using namespace std::chrono_literals;
using answers_clock = std::chrono::steady_clock;

template <class T>
bool answers_done(asio::io_context& io, std::future<T>& f, answers_clock::duration bound = 5s) {
  for (auto end = answers_clock::now() + bound; f.wait_for(0s) != std::future_status::ready && answers_clock::now() < end;) {
    io.restart();
    io.run_for(5ms);
  }
  return f.wait_for(0s) == std::future_status::ready;
}

TEST(pending_answers, a_keyed_settle_answers_only_that_key) {
  asio::io_context io;
  pending_answers<std::string, std::string> answers;
  auto join = asio::co_spawn(io, answers.await("JOIN #a"), asio::use_future);
  auto other = asio::co_spawn(io, answers.await("JOIN #b", answers_clock::now() + 100ms), asio::use_future);
  io.run_for(10ms);
  EXPECT_EQ(answers.size(), 2u);
  answers.update("JOIN #a", [](std::string& a) { a += "half "; });
  answers.settle("JOIN #a", [](std::string& a) { a += "done"; });
  ASSERT_TRUE(answers_done(io, join));
  EXPECT_EQ(join.get(), std::optional<std::string>("half done"));
  ASSERT_TRUE(answers_done(io, other));
  EXPECT_EQ(other.get(), std::nullopt);  // its deadline came first
  EXPECT_EQ(answers.size(), 0u);
}

TEST(pending_answers, the_oldest_settles_first) {
  asio::io_context io;
  pending_answers<int, long> sends;
  auto first = asio::co_spawn(io, sends.await(0), asio::use_future);
  io.run_for(5ms);
  auto second = asio::co_spawn(io, sends.await(0), asio::use_future);
  io.run_for(5ms);
  EXPECT_TRUE(sends.settle_oldest([](long& seq) { seq = 7; }));
  EXPECT_TRUE(sends.settle_oldest([](long& seq) { seq = 8; }));
  EXPECT_FALSE(sends.settle_oldest([](long& seq) { seq = 9; }));  // none left unsettled
  ASSERT_TRUE(answers_done(io, first));
  ASSERT_TRUE(answers_done(io, second));
  EXPECT_EQ(first.get(), std::optional<long>(7));
  EXPECT_EQ(second.get(), std::optional<long>(8));
}

TEST(pending_answers, settle_all_answers_each_as_it_stands) {
  asio::io_context io;
  pending_answers<std::string, int> answers;
  auto a = asio::co_spawn(io, answers.await("x"), asio::use_future);
  auto b = asio::co_spawn(io, answers.await("y"), asio::use_future);
  io.run_for(10ms);
  answers.update("x", [](int& n) { n = 3; });
  answers.settle_all();
  ASSERT_TRUE(answers_done(io, a));
  ASSERT_TRUE(answers_done(io, b));
  EXPECT_EQ(a.get(), std::optional<int>(3));
  EXPECT_EQ(b.get(), std::optional<int>(0));
}

TEST(pending_answers, a_request_destroyed_while_waiting_is_forgotten) {
  pending_answers<std::string, int> answers;
  {
    asio::io_context io;
    asio::co_spawn(io, answers.await("x"), asio::detached);
    io.run_for(10ms);
    EXPECT_EQ(answers.size(), 1u);
  }
  EXPECT_EQ(answers.size(), 0u);
  answers.settle_all();  // touches nothing destroyed
}

}  // namespace
