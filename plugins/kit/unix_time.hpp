// The wall clock as the host's messages and answers count it: milliseconds since the Unix epoch.
#pragma once

#include <chrono>
#include <cstdint>

namespace xconn::kit {

inline std::int64_t unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace xconn::kit
