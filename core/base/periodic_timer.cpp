#include "core/base/periodic_timer.hpp"

#include <algorithm>

namespace xconn {

periodic_timer::periodic_timer(boost::asio::any_io_executor ex, std::chrono::milliseconds period,
                               std::function<void()> task)
    : timer_(std::move(ex)), period_(period), task_(std::move(task)) {}

std::chrono::milliseconds periodic_timer::quarter_of(std::chrono::seconds span, std::chrono::milliseconds floor,
                                                     std::chrono::milliseconds ceiling) {
  return std::clamp<std::chrono::milliseconds>(span / 4, floor, ceiling);
}

void periodic_timer::start() { schedule(); }

void periodic_timer::stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  timer_.cancel();
}

void periodic_timer::schedule() {
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  timer_.expires_after(period_);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    task_();
    schedule();
  });
}

}  // namespace xconn
