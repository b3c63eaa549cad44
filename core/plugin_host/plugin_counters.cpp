#include "core/plugin_host/plugin_counters.hpp"

#include <algorithm>

namespace xconn {

bool plugin_counters::add(std::string_view name, std::uint64_t delta) {
  bool valid = !name.empty() && name.size() <= max_name_bytes &&
               std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
  if (!valid) return false;
  std::lock_guard lock(mutex_);
  auto it = counts_.find(name);
  if (it == counts_.end()) {
    if (counts_.size() >= max_names) return false;
    it = counts_.emplace(std::string(name), 0).first;
  }
  it->second += delta;
  return true;
}

std::vector<std::pair<std::string, std::uint64_t>> plugin_counters::snapshot() const {
  std::lock_guard lock(mutex_);
  return {counts_.begin(), counts_.end()};
}

}  // namespace xconn
