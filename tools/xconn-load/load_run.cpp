#include "load_run.hpp"

#include <algorithm>

namespace xconn::load {

std::uint64_t run_state::reserve(std::uint64_t want) {
  if (stopping.load(std::memory_order_relaxed)) return 0;
  if (opts.count == 0) return want;
  std::uint64_t before = reserved.fetch_add(want, std::memory_order_relaxed);
  if (before >= opts.count) return 0;
  return std::min(want, opts.count - before);
}

void driver_totals::merge(driver_totals&& o) {
  operations += o.operations;
  inbound_acked += o.inbound_acked;
  frames_sent += o.frames_sent;
  frames_received += o.frames_received;
  errors += o.errors;
  duplicates += o.duplicates;
  unanswered += o.unanswered;
  for (auto& [code, n] : o.error_codes) error_codes[code] += n;
  latency.merge(o.latency);
}

}  // namespace xconn::load
