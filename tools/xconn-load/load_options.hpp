// What one xconn-load run does, read from its command line. Every run is bounded: a duration always applies,
// and only loopback addresses are accepted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xconn::load {

enum class scenario { invoke, inbound, outbound, mixed, idle, upload, download };
enum class target_kind { xconnd, ceiling };

struct load_options {
  std::string host = "127.0.0.1";
  unsigned short port = 8840;
  target_kind target = target_kind::xconnd;
  std::string plugin = "echo";
  std::string key;                 // API key (--key, else $XCONN_API_KEY, else --key-file)
  scenario what = scenario::invoke;
  int sockets = 1;
  int channels = 0;                // 0: one per socket
  int inflight = 1;                // operations in flight per channel
  int threads = 0;                 // client I/O threads (0 on the command line: half the cores, at most one a socket)
  double duration_s = 10;          // the timed phase never runs longer
  std::uint64_t count = 0;         // 0: no count bound (the duration still applies)
  double rate = 0;                 // operations per second in all, paced (0: each slot sends on its answer)
  int burst = 100;                 // inbound: messages per echo_burst call
  int deltas = 2;                  // outbound: deltas before each final
  int text_bytes = 64;             // text length in every generated message
  std::uint64_t file_bytes = 1 << 20;  // upload, download: the size of each file
  int server_pid = 0;              // idle: measure this process's RSS around the channel set-up
  std::string ready_file;          // created once every socket and channel is set up (another run may start)
  bool json = false;
  bool progress = true;
};

std::string_view to_string(scenario s);
// upload and download run over HTTP beside the WebSocket that signed their channel in.
inline bool moves_files(scenario s) { return s == scenario::upload || s == scenario::download; }

// The options, or a message saying what is wrong (or the usage text, for --help).
struct parse_outcome {
  std::optional<load_options> options;
  std::string message;
  bool help = false;
};
parse_outcome parse_options(const std::vector<std::string>& args);

std::string usage();

}  // namespace xconn::load
