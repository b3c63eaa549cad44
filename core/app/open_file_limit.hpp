// The open-file limit xconnd needs for itself: one descriptor per connection (server.max_connections) and a reserve
// for the store, the listener, plugin libraries and the plugins' own sockets and files. Raised at start as far as
// the hard limit allows; when that is not enough, the reason is logged (and connections past it wait in the accept
// back-off instead of failing anything else).
#pragma once

#include <cstdint>

namespace xconn {

struct open_file_limit {
  static constexpr std::uint64_t reserve = 256;
  std::uint64_t needed = 0;
  std::uint64_t before = 0;  // the soft limit found
  std::uint64_t after = 0;   // the soft limit now
  std::uint64_t hard = 0;
  bool enough() const { return after >= needed; }
};

// Raises the soft RLIMIT_NOFILE towards max_connections + reserve (never lowers it) and reports what it found and did.
open_file_limit raise_open_file_limit(std::uint64_t max_connections);

}  // namespace xconn
