#include "timings.hpp"

#include <chrono>

namespace xconn::chaos {

timings::timings(const std::string& path) {
  if (!path.empty()) out_.open(path, std::ios::app);
}

void timings::mark(const std::string& name, const std::string& detail) {
  if (!out_.is_open()) return;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch());
  out_ << name << ' ' << ns.count();
  if (!detail.empty()) out_ << ' ' << detail;
  out_ << '\n' << std::flush;
}

}  // namespace xconn::chaos
