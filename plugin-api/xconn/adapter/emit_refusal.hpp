// What an adapter does with the host's refusal of an emit (docs/plugin-api.md "Refused emits"). invalid_message (a
// field over its bound, a control character, a file that is not the channel's) and channel_not_found are final: the
// same message gets the same answer every time, so retrying it would stop the adapter's cursor for good. The adapter
// logs it (code and field, never the text) and moves on; the host has already recorded an `error` event. Anything else
// (store_failed, a cursor op the store refused) may pass later: that alone is retried.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace xconn::adapter {

inline bool emit_refused_for_good(std::string_view code) {
  return code == "invalid_message" || code == "channel_not_found";
}

// Refusals counted so that a target flooding bad input costs a handful of log lines, not one per message: count()
// answers the running total at the 1st, 2nd, 4th, 8th, ... and 0 otherwise. Any thread.
class refusal_tally {
 public:
  std::uint64_t count() {
    auto n = ++n_;
    return (n & (n - 1)) == 0 ? n : 0;
  }

 private:
  std::atomic<std::uint64_t> n_{0};
};

}  // namespace xconn::adapter
