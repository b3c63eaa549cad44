// Latency samples of one run, in microseconds: every operation's, kept whole (a bounded run keeps a bounded
// number), so percentiles are exact rather than bucketed.
#pragma once

#include <cstdint>
#include <vector>

namespace xconn::load {

struct latency_summary {
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  std::uint64_t samples = 0;
};

class latency_stats {
 public:
  void add(std::uint64_t micros) { samples_.push_back(micros > UINT32_MAX ? UINT32_MAX : std::uint32_t(micros)); }
  void merge(const latency_stats& other);
  latency_summary summarize();  // sorts in place
  std::uint64_t size() const { return samples_.size(); }

 private:
  std::vector<std::uint32_t> samples_;
};

}  // namespace xconn::load
