// The waits between tries at a target that cannot be reached (a check of a restored channel, a reconnect, a probe of
// a receiver): 1 s, doubling, at most 60 s, the rule every adapter follows (docs/adapters.md). A fresh one (`= {}`)
// starts again at 1 s once the target answered.
#pragma once

#include <algorithm>
#include <chrono>

namespace xconn::adapter {

class retry_backoff {
 public:
  static constexpr std::chrono::seconds first{1};
  static constexpr std::chrono::seconds longest{60};

  // The wait before the next try; each call doubles the one after it.
  std::chrono::seconds next() {
    auto wait = next_;
    next_ = std::min(next_ * 2, longest);
    return wait;
  }

 private:
  std::chrono::seconds next_ = first;
};

}  // namespace xconn::adapter
