// The waits between probes of a receiver that cannot be reached: 1 s, doubling, at most 60 s (the adapters'
// shared rule for a target that cannot be reached).
#pragma once

#include <algorithm>
#include <chrono>

namespace webhook {

class retry_backoff {
 public:
  static constexpr std::chrono::seconds first{1};
  static constexpr std::chrono::seconds longest{60};

  // The wait before the next probe; each call doubles the one after it.
  std::chrono::seconds next() {
    auto wait = next_;
    next_ = std::min(next_ * 2, longest);
    return wait;
  }

 private:
  std::chrono::seconds next_ = first;
};

}  // namespace webhook
