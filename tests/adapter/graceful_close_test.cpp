// close_gracefully with the loop running on its own thread: every consumer is closed on the loop, the call returns
// as soon as none is linked, and at its grace when one never lets go.
#include <xconn/adapter/graceful_close.hpp>

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>

#include <atomic>
#include <thread>

namespace graceful_close_test {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using close_clock = std::chrono::steady_clock;

// linked() until linger after close(); never when linger is max.
struct lingering_consumer {
  close_clock::duration linger;
  std::atomic<bool> closed{false};
  close_clock::time_point closed_at{};
  void close() {
    closed = true;
    closed_at = close_clock::now();
  }
  bool linked() const { return !closed || linger == close_clock::duration::max() || close_clock::now() < closed_at + linger; }
};

struct running_loop {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::thread runner{[this] { io.run(); }};
  ~running_loop() {
    work.reset();
    io.stop();
    runner.join();
  }
};

TEST(graceful_close, returns_once_every_consumer_let_go) {
  running_loop loop;
  xconn::adapter::shared_consumers<lingering_consumer> all;
  auto a = all.open("a", [] { return std::make_shared<lingering_consumer>(50ms); }).consumer;
  auto b = all.open("b", [] { return std::make_shared<lingering_consumer>(0ms); }).consumer;
  auto start = close_clock::now();
  xconn::adapter::close_gracefully(loop.io, all, 5s);
  EXPECT_TRUE(a->closed);
  EXPECT_TRUE(b->closed);
  EXPECT_FALSE(a->linked());
  EXPECT_LT(close_clock::now() - start, 2s);
}

TEST(graceful_close, gives_up_at_the_grace) {
  running_loop loop;
  auto stuck = std::make_shared<lingering_consumer>(close_clock::duration::max());
  auto start = close_clock::now();
  xconn::adapter::close_gracefully(loop.io, std::vector{stuck}, 100ms);
  auto took = close_clock::now() - start;
  EXPECT_TRUE(stuck->closed);
  EXPECT_GE(took, 100ms);
  EXPECT_LT(took, 2s);
}

}  // namespace graceful_close_test
