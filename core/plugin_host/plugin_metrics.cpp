#include "core/plugin_host/plugin_metrics.hpp"

namespace xconn {

void plugin_metrics::count_tool(const std::string& tool, call_outcome outcome) {
  std::lock_guard lock(mutex_);
  ++tools_[tool][static_cast<std::size_t>(outcome)];
}

std::map<std::string, std::array<std::uint64_t, 3>> plugin_metrics::tools() const {
  std::lock_guard lock(mutex_);
  return tools_;
}

}  // namespace xconn
