// Optional step timings of one epoch (--timings FILE): "name monotonic_ns [detail]" lines, appended and flushed
// at once, on the same clock as CLOCK_MONOTONIC (steady_clock), so that a caller can set them against its own
// readings of that clock (the kill, the daemon's start). With no path, nothing is written.
//   start             the driver began the epoch
//   unacked           how many messages were delivered in earlier epochs with no ack sent (detail: the count)
//   connected         the WebSocket was accepted
//   hello             connector.hello answered (detail: the connector_id it answered)
//   channels          every journaled channel reopened
//   first_delivery    the first chat.message pushed in this epoch (detail: its message_id)
//   first_redelivery  the first of the messages counted in unacked pushed again (detail: its id)
//   all_redelivered   the last of them pushed again (detail: how many)
//   redelivered       at the end: "N M", N of the M such messages pushed again in this epoch
#pragma once

#include <fstream>
#include <string>

namespace xconn::chaos {

class timings {
 public:
  explicit timings(const std::string& path);
  void mark(const std::string& name, const std::string& detail = "");

 private:
  std::ofstream out_;
};

}  // namespace xconn::chaos
