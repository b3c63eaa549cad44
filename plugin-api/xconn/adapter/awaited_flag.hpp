// A flag the coroutines of one event loop wait on until it is set or their deadline passes (a registration settled,
// a connection lost, a batch of lines written); any number may wait. pulse() wakes the waiters without setting it:
// a state changed and each re-checks what it waits for. Not thread-safe: set and awaited on the loop's thread.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace xconn::adapter {

class awaited_flag {
 public:
  using clock = std::chrono::steady_clock;

  bool is_set() const { return set_; }
  void set() {
    set_ = true;
    pulse();
  }
  void pulse() {
    for (auto* w : waiters_) {
      w->woken = true;
      w->timer.cancel();
    }
  }

  // Whether it was set by the deadline; it also returns (false unless set) when pulsed.
  boost::asio::awaitable<bool> wait(clock::time_point deadline = clock::time_point::max()) {
    auto executor = co_await boost::asio::this_coro::executor;
    waiter w{boost::asio::steady_timer(executor, deadline)};
    listed guard{waiters_, &w};  // off the list even when the frame is destroyed while suspended
    while (!set_ && !w.woken && clock::now() < deadline)
      co_await w.timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    co_return set_;
  }

 private:
  struct waiter {
    boost::asio::steady_timer timer;
    bool woken = false;
  };
  struct listed {
    std::vector<waiter*>& list;
    waiter* w;
    listed(std::vector<waiter*>& l, waiter* x) : list(l), w(x) { list.push_back(w); }
    ~listed() { std::erase(list, w); }
  };
  bool set_ = false;
  std::vector<waiter*> waiters_;
};

}  // namespace xconn::adapter
