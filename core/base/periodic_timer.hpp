// Runs a task every period on an executor until stopped: the sweeps and ticks of the services.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <mutex>

namespace xconn {

class periodic_timer {
 public:
  periodic_timer(boost::asio::any_io_executor ex, std::chrono::milliseconds period, std::function<void()> task);

  // A quarter of span (so that what the task ends is at most a quarter of its life late), within [floor, ceiling].
  static std::chrono::milliseconds quarter_of(std::chrono::seconds span, std::chrono::milliseconds floor,
                                              std::chrono::milliseconds ceiling);

  // The first run is one period after start. stop() is final, and safe from any thread: a run already under way
  // finishes, none follows.
  void start();
  void stop();

 private:
  void schedule();

  std::mutex mutex_;
  boost::asio::steady_timer timer_;
  std::chrono::milliseconds period_;
  std::function<void()> task_;
  bool stopped_ = false;
};

}  // namespace xconn
