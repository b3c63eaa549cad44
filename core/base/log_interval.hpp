// A warning that can repeat once per message (an eviction under a flood) written at most once per interval, with
// how many happened since the last line: the log shows the rate, not a line per message (a flood of 1.28 M lines
// once wrote 1.27 M of them). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace xconn {

class log_interval {
 public:
  using clock = std::chrono::steady_clock;
  explicit log_interval(clock::duration interval) : interval_(interval) {}

  // Counts one occurrence. Returns how many to report (the first ever at once, then all since the last line) when
  // a line is due, else 0.
  std::uint64_t count(clock::time_point now = clock::now()) {
    std::lock_guard lock(mutex_);
    ++pending_;
    if (logged_once_ && now - last_ < interval_) return 0;
    logged_once_ = true;
    last_ = now;
    auto due = pending_;
    pending_ = 0;
    return due;
  }

  // What counted since the last line once an interval has passed (a periodic tick calls it, so the last burst's
  // count is written without waiting for the next occurrence); 0 when nothing is due.
  std::uint64_t flush(clock::time_point now = clock::now()) {
    std::lock_guard lock(mutex_);
    if (pending_ == 0 || now - last_ < interval_) return 0;
    last_ = now;
    auto due = pending_;
    pending_ = 0;
    return due;
  }

 private:
  const clock::duration interval_;
  std::mutex mutex_;
  bool logged_once_ = false;
  clock::time_point last_{};
  std::uint64_t pending_ = 0;
};

}  // namespace xconn
