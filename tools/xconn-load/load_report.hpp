// The end of a run as people read it (a few aligned lines) and as machines do (one JSON object).
#pragma once

#include "load_options.hpp"
#include "load_run.hpp"

#include <optional>
#include <string>

namespace xconn::load {

struct memory_reading {
  long long rss_before_bytes = 0, rss_after_bytes = 0;  // before the sockets, after every channel signed in
  int sockets = 0, channels = 0;
  // What the sockets and their channels added, shared out per channel and per socket (each figure holds the
  // other's share too: runs with one channel a socket and with many channels a socket tell them apart).
  long long per_channel_bytes() const { return channels > 0 ? (rss_after_bytes - rss_before_bytes) / channels : 0; }
  long long per_socket_bytes() const { return sockets > 0 ? (rss_after_bytes - rss_before_bytes) / sockets : 0; }
};

struct run_report {
  const load_options* opts = nullptr;
  double elapsed_s = 0;
  double setup_s = 0;  // from the first connect to the last channel signed in (every hello included)
  std::uint64_t operations_in_window = 0;  // answered within elapsed_s: what the rate counts
  driver_totals totals;
  latency_summary latency;
  std::optional<memory_reading> memory;  // idle with --server-pid
  // The CPU time of the busiest client thread over the window, as a share of the window: near 1, that thread
  // was the limit and the figures measure the client, not the server.
  double client_busiest_share = 0;
  static constexpr double client_bound_share = 0.9;
  bool client_bound() const { return client_busiest_share >= client_bound_share; }

  double rate() const { return elapsed_s > 0 ? static_cast<double>(operations_in_window) / elapsed_s : 0; }
  // upload, download: file bytes moved per second (0 for the other scenarios)
  double bytes_per_s() const { return moves_files(opts->what) ? rate() * static_cast<double>(opts->file_bytes) : 0; }
};

std::string progress_line(double seconds, std::uint64_t completed, double rate, std::uint64_t errors,
                          std::int64_t in_flight);
std::string to_text(const run_report& r);
std::string to_json(const run_report& r);

// VmRSS of a process in bytes (0 when it cannot be read).
long long resident_bytes(int pid);

}  // namespace xconn::load
