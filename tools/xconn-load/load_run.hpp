// What every socket driver of one run shares across the client threads (atomics only), and what each one
// counts on its own thread (merged once the run is over).
#pragma once

#include "latency_stats.hpp"
#include "load_options.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

namespace xconn::load {

struct run_state {
  explicit run_state(const load_options& o) : opts(o) {}
  const load_options& opts;
  std::string card_id;                      // the connector card the hellos name
  std::atomic<bool> stopping{false};        // no new operations
  std::atomic<std::uint64_t> reserved{0};   // operations begun, against --count
  std::atomic<std::uint64_t> completed{0};  // operations answered (or inbound messages acked)
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::int64_t> in_flight{0};   // operations sent and not yet ended

  // Takes up to want operations from the count budget; returns how many may start (0: none).
  std::uint64_t reserve(std::uint64_t want);
};

struct driver_totals {
  std::uint64_t operations = 0;       // answered without error (inbound: messages received and acked)
  std::uint64_t inbound_acked = 0;    // chat.message pushes acknowledged (mixed counts them apart)
  std::uint64_t frames_sent = 0;
  std::uint64_t frames_received = 0;
  std::uint64_t errors = 0;           // error answers, undecodable frames, lost sockets
  std::uint64_t duplicates = 0;       // an inbound message seen twice
  std::uint64_t unanswered = 0;       // still waiting when the run ended
  std::map<std::string, std::uint64_t> error_codes;
  latency_stats latency;

  void merge(driver_totals&& other);
};

}  // namespace xconn::load
