#include "core/base/histogram.hpp"

#include <algorithm>
#include <cstdio>

namespace xconn {

histogram::histogram(std::span<const double> bounds) : bounds_(bounds.first(std::min(bounds.size(), max_buckets))) {}

void histogram::observe(double value) {
  auto bucket = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

namespace {
std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}
}  // namespace

void histogram::render(std::string& out, std::string_view name, std::string_view labels) const {
  std::string prefix = std::string(labels) + (labels.empty() ? "" : ",");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out.append(name).append("_bucket{").append(prefix).append("le=\"").append(le).append("\"} ");
    out.append(std::to_string(cumulative)).append("\n");
  }
  std::string braces = labels.empty() ? "" : "{" + std::string(labels) + "}";
  out.append(name).append("_sum").append(braces).append(" ").append(number(sum_.load(std::memory_order_relaxed))).append("\n");
  out.append(name).append("_count").append(braces).append(" ").append(std::to_string(cumulative)).append("\n");
}

}  // namespace xconn
