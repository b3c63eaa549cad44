// A Prometheus histogram: fixed bucket bounds, observed from any thread without a lock, rendered as the text
// format's _bucket / _sum / _count lines.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace xconn {

class histogram {
 public:
  static constexpr std::size_t max_buckets = 20;
  // Upper bounds in seconds for latencies: 0.5 ms to 30 s.
  static constexpr std::array<double, 15> seconds_bounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                         0.25,   0.5,   1,      2.5,   5,     10,    30};
  // Upper bounds for counts (writes per commit): 1 to 1024.
  static constexpr std::array<double, 11> count_bounds{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

  explicit histogram(std::span<const double> bounds = seconds_bounds);

  void observe(double value);
  void observe(std::chrono::steady_clock::duration d) { observe(std::chrono::duration<double>(d).count()); }

  // Appends name_bucket{labels,le="…"} lines (cumulative), name_sum and name_count. labels: `plugin="echo"` or "".
  void render(std::string& out, std::string_view name, std::string_view labels) const;

 private:
  std::span<const double> bounds_;
  std::array<std::atomic<std::uint64_t>, max_buckets + 1> counts_{};  // per bucket, not cumulative; last: +Inf
  std::atomic<double> sum_{0};
};

}  // namespace xconn
