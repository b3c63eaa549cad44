// An adapter's one health as the host sees it (xconn_host_report_health), made of several sources: each consumer
// (a poller, a connection) and the checks of restored channels the target has not answered yet. Degraded while any
// source has a trouble (the code shown is the newest one, else any that remains), healthy when none has; the host
// hears only changes, so one consumer's recovery does not hide another's outage.
#pragma once

#include <xconn/plugin.hpp>

#include <map>
#include <mutex>
#include <string>

namespace xconn::adapter {

class health_board {
 public:
  explicit health_board(xconn::sdk::host host) : host_(host) {}

  // code "" clears source's trouble.
  void set(const std::string& source, const std::string& code) {
    std::lock_guard lock(mutex_);
    if (code.empty()) troubles_.erase(source);
    else troubles_[source] = code;
    std::string shown = !code.empty() ? code : troubles_.empty() ? std::string() : troubles_.begin()->second;
    if (shown == shown_) return;
    shown_ = shown;
    // Under the lock: two changes reach the host in the order they were made.
    host_.report_health(shown.empty() ? XCONN_HEALTH_HEALTHY : XCONN_HEALTH_DEGRADED, shown);
  }

 private:
  xconn::sdk::host host_;
  std::mutex mutex_;
  std::map<std::string, std::string> troubles_;  // by source
  std::string shown_;                            // what the host was told last ("" healthy)
};

}  // namespace xconn::adapter
