// A call to a target through its rate_limiter: it waits out the key's hold first, and a "too many requests" answer
// holds the key for the wait the target named (at least 1 s), so every later call for that key waits too. A send
// that should still go out when the target asks for a short wait asks again while the hold ends before a deadline.
//
//   auto r = co_await limited_call(limits_, key, [&] { return api_->call(...); },
//                                  [](const reply& r) { return r.http_status == 429 ? wait_of(r) : no_wait; });
//   auto r = co_await limited_call_until(limits_, key, now + 25s, same call, same reading);
//
// retry_after_of(answer) is none when the answer is not a rate limit, else the target's wait (zero when unnamed).
// The call is made anew each time: it must not hold what a previous try moved away. A call capturing by reference
// may be written in place, as above; one capturing by value goes into a named local first (GCC 12 destroys a lambda
// written inside a co_await twice when a stop destroys the frame, docs/plugin-api.md "One compiler trap").
#pragma once

#include <xconn/adapter/rate_limiter.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <type_traits>

namespace xconn::adapter {

template <class Call>
using limited_answer = typename std::invoke_result_t<Call&>::value_type;

template <class Call, class RetryAfter>
boost::asio::awaitable<limited_answer<Call>> limited_call(rate_limiter& limits, std::string key, Call call,
                                                          RetryAfter retry_after_of) {
  co_await limits.wait(key);
  auto answer = co_await call();
  std::optional<std::chrono::seconds> wait = retry_after_of(answer);
  if (wait) limits.hold(key, *wait);
  co_return answer;
}

// limited_call, asked again while the target holds it off for less than what is left until deadline; the last
// answer (the rate limit itself once the wait would pass the deadline).
template <class Call, class RetryAfter>
boost::asio::awaitable<limited_answer<Call>> limited_call_until(rate_limiter& limits, std::string key,
                                                                std::chrono::steady_clock::time_point deadline,
                                                                Call call, RetryAfter retry_after_of) {
  for (;;) {
    auto answer = co_await limited_call(limits, key, call, retry_after_of);
    std::optional<std::chrono::seconds> wait = retry_after_of(answer);
    if (!wait || std::chrono::steady_clock::now() + std::max(*wait, rate_limiter::least_hold) > deadline)
      co_return answer;
  }
}

}  // namespace xconn::adapter
