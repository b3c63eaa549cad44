// What /metrics tells of one plugin beyond its message counters: call latencies, tool outcomes, reloads, hellos.
// Shared (a shared_ptr) by the connector and the callbacks of calls that may outlive it.
#pragma once

#include "core/base/histogram.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace xconn {

enum class call_outcome { ok, error, timeout };

struct plugin_metrics {
  histogram invoke;        // a tool call, from its start to its answer
  histogram send;          // a final's send
  histogram emit_commit;   // an emit until its record is committed
  histogram reload_pause;  // calls held while a new generation took over
  std::atomic<std::uint64_t> hellos{0};
  std::atomic<std::uint64_t> reloads_ok{0};
  std::atomic<std::uint64_t> reloads_refused{0};

  void count_tool(const std::string& tool, call_outcome outcome);
  // Each tool's calls by outcome (ok, error, timeout).
  std::map<std::string, std::array<std::uint64_t, 3>> tools() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::array<std::uint64_t, 3>> tools_;
};

}  // namespace xconn
