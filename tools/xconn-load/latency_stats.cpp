#include "latency_stats.hpp"

#include <algorithm>
#include <cmath>

namespace xconn::load {

void latency_stats::merge(const latency_stats& other) {
  samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
}

latency_summary latency_stats::summarize() {
  latency_summary s;
  s.samples = samples_.size();
  if (samples_.empty()) return s;
  std::sort(samples_.begin(), samples_.end());
  // Nearest rank: the smallest sample with at least q of them at or below it.
  auto at = [&](double q) {
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples_.size())));
    return samples_[std::clamp<std::size_t>(rank, 1, samples_.size()) - 1] / 1000.0;
  };
  s.p50_ms = at(0.50);
  s.p90_ms = at(0.90);
  s.p99_ms = at(0.99);
  s.max_ms = samples_.back() / 1000.0;
  return s;
}

}  // namespace xconn::load
