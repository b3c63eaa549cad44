// A target's "too many requests, retry after N s" (Telegram's 429 with retry_after) kept per key (a token's key):
// every later call for that key waits until the hold has passed, at least 1 s even when the target named no wait,
// so an adapter never hammers a target that asked it to stop. The clock is injected (tests move it by hand).
// Thread-safe.
//
// Usage (every call for a token goes through here):
//
//   xconn::adapter::rate_limiter limits_;
//
//   awaitable<api_reply> call(const std::string& key, ...) {
//     co_await limits_.wait(key);  // returns at once unless the key is held
//     auto r = co_await api_->call(...);
//     if (r.http_status == 429) limits_.hold(key, std::chrono::seconds(r.retry_after_s));
//     co_return r;
//   }
//
// The limiter must outlive every wait on it (the adapter drops its coroutines before its members go).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace xconn::adapter {

class rate_limiter {
 public:
  using clock = std::chrono::steady_clock;
  using now_function = std::function<clock::time_point()>;
  // The shortest hold: a target that refuses without naming a wait is not asked again at once.
  static constexpr std::chrono::seconds least_hold{1};

  explicit rate_limiter(now_function now = [] { return clock::now(); }) : now_(std::move(now)) {}

  // The target refused key's call for retry_after (zero or less when it named none): held until then, at least
  // least_hold from now. A later, shorter answer never cuts an earlier, longer hold short.
  void hold(const std::string& key, std::chrono::seconds retry_after) {
    auto now = now_();
    auto until = now + std::max<std::chrono::seconds>(retry_after, least_hold);
    std::lock_guard lock(mutex_);
    std::erase_if(until_, [&](const auto& held) { return held.second <= now; });  // passed holds: no growth
    auto& kept = until_[key];
    kept = std::max(kept, until);
  }

  // When key's hold ends; none when key is not held now.
  std::optional<clock::time_point> until(const std::string& key) const {
    auto now = now_();
    std::lock_guard lock(mutex_);
    auto it = until_.find(key);
    if (it == until_.end() || it->second <= now) return std::nullopt;
    return it->second;
  }
  bool held(const std::string& key) const { return until(key).has_value(); }

  // How long key is still held (zero when it is not).
  clock::duration left(const std::string& key) const {
    auto now = now_();
    std::lock_guard lock(mutex_);
    auto it = until_.find(key);
    return it == until_.end() || it->second <= now ? clock::duration::zero() : it->second - now;
  }

  // Waits on the calling coroutine's executor until key is not held; a hold noted meanwhile is waited out too.
  boost::asio::awaitable<void> wait(std::string key) const {
    for (auto left_now = left(key); left_now > clock::duration::zero(); left_now = left(key)) {
      boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, left_now);
      co_await timer.async_wait(boost::asio::use_awaitable);
    }
  }

 private:
  now_function now_;
  mutable std::mutex mutex_;
  std::map<std::string, clock::time_point> until_;  // by key; a passed one is dropped at the next hold
};

}  // namespace xconn::adapter
