// awaited_flag on a real io_context: waiters wake when it is set (true), at their deadline (false), when pulsed
// (false, still unset), and a waiter whose frame is destroyed while suspended leaves no dangling entry behind.
#include <xconn/adapter/awaited_flag.hpp>

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <future>

namespace {

namespace asio = boost::asio;
using xconn::adapter::awaited_flag;
using namespace std::chrono_literals;
using flag_clock = std::chrono::steady_clock;

bool flag_wait_done(asio::io_context& io, std::future<bool>& f, flag_clock::duration bound = 5s) {
  for (auto end = flag_clock::now() + bound; f.wait_for(0s) != std::future_status::ready && flag_clock::now() < end;) {
    io.restart();
    io.run_for(5ms);
  }
  return f.wait_for(0s) == std::future_status::ready;
}

TEST(awaited_flag, set_wakes_every_waiter) {
  asio::io_context io;
  awaited_flag flag;
  auto a = asio::co_spawn(io, flag.wait(), asio::use_future);
  auto b = asio::co_spawn(io, flag.wait(flag_clock::now() + 60s), asio::use_future);
  io.run_for(20ms);
  EXPECT_EQ(a.wait_for(0s), std::future_status::timeout);
  flag.set();
  ASSERT_TRUE(flag_wait_done(io, a));
  ASSERT_TRUE(flag_wait_done(io, b));
  EXPECT_TRUE(a.get());
  EXPECT_TRUE(b.get());
  EXPECT_TRUE(flag.is_set());
}

TEST(awaited_flag, a_deadline_answers_false) {
  asio::io_context io;
  awaited_flag flag;
  auto start = flag_clock::now();
  auto a = asio::co_spawn(io, flag.wait(start + 50ms), asio::use_future);
  ASSERT_TRUE(flag_wait_done(io, a));
  EXPECT_FALSE(a.get());
  EXPECT_GE(flag_clock::now() - start, 50ms);
}

TEST(awaited_flag, already_set_answers_at_once) {
  asio::io_context io;
  awaited_flag flag;
  flag.set();
  auto a = asio::co_spawn(io, flag.wait(flag_clock::now() + 60s), asio::use_future);
  ASSERT_TRUE(flag_wait_done(io, a, 1s));
  EXPECT_TRUE(a.get());
}

TEST(awaited_flag, pulse_wakes_the_waiters_without_setting_it) {
  asio::io_context io;
  awaited_flag flag;
  auto a = asio::co_spawn(io, flag.wait(), asio::use_future);
  io.run_for(20ms);
  flag.pulse();
  ASSERT_TRUE(flag_wait_done(io, a));
  EXPECT_FALSE(a.get());
  EXPECT_FALSE(flag.is_set());
  // A later waiter is not woken by the earlier pulse.
  auto b = asio::co_spawn(io, flag.wait(flag_clock::now() + 50ms), asio::use_future);
  io.restart();
  io.run_for(20ms);
  EXPECT_EQ(b.wait_for(0s), std::future_status::timeout);
  ASSERT_TRUE(flag_wait_done(io, b));
}

TEST(awaited_flag, a_waiter_destroyed_while_suspended_is_forgotten) {
  awaited_flag flag;
  {
    asio::io_context io;
    asio::co_spawn(io, flag.wait(), asio::detached);
    io.run_for(20ms);
  }  // the loop's destruction destroys the suspended frame
  flag.set();  // must not touch the destroyed waiter's timer (ASan would see it)
  EXPECT_TRUE(flag.is_set());
}

}  // namespace
