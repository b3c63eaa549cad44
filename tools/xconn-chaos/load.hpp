// The two phases before the kills: setup (a connector_id and signed-in channels, journaled) and one load epoch
// (mixed traffic against the running daemon until it dies under it, or a time bound).
#pragma once

#include "http_ops.hpp"

#include <cstdint>
#include <string>

namespace xconn::chaos {

struct run_options {
  target daemon;
  std::string journal_path;
  unsigned seed = 1;
  int max_seconds = 60;  // a load epoch ends by itself after this long
  int channels = 4;
  // load: the daemon's files.max_bytes; a third of the uploads then go past it (within the Content-Length
  // allowance, so the host stores chunks before it refuses and erases them). 0: none.
  std::uint64_t max_bytes = 0;
  std::string timings_path;  // load: the epoch's step timings (timings.hpp); "" for none
};

// Exit codes: 0 done (for load: the daemon went away or the time was up), 2 could not start.
int run_setup(const run_options& o);
int run_load(const run_options& o);

}  // namespace xconn::chaos
