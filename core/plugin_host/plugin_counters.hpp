// A plugin's own counters (plugin.h xconn_host_count): polls, sends, rate-limit waits, errors by code, whatever its
// target has worth counting. /metrics shows them as xconn_plugin_events_total{plugin,name}. Bounded: a plugin
// cannot grow the host's memory or its metrics page without limit.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xconn {

class plugin_counters {
 public:
  static constexpr std::size_t max_names = 64;
  static constexpr std::size_t max_name_bytes = 48;

  // Adds delta to name ([a-z0-9_]{1,48}). False for a bad name, or a new name past max_names. Any thread.
  bool add(std::string_view name, std::uint64_t delta);
  // Every counter, by name.
  std::vector<std::pair<std::string, std::uint64_t>> snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t, std::less<>> counts_;
};

}  // namespace xconn
