// xconn-chaos: the client half of tools/chaos.sh. It keeps a journal of what it saw in a file, so that each
// kill -9 of the daemon leaves the record intact, and checks the host's promises against it at the end.
//   xconn-chaos setup  --port P --key-file F --journal J [--channels N]
//   xconn-chaos load   --port P --key-file F --journal J [--seed S] [--seconds T] [--timings FILE] [--max-bytes N]
//   xconn-chaos verify --port P --key-file F --journal J
//   xconn-chaos audit  --journal J        (the checks of verify again, on a journal kept from an earlier run)
// --timings FILE: the load epoch's steps (connected, hello, channels reopened, first redelivery) as lines of
// CLOCK_MONOTONIC nanoseconds appended to FILE (timings.hpp), for tests/failover.
// --max-bytes N: the daemon's files.max_bytes; a third of the load's uploads then go past it.
#include "audit.hpp"
#include "journal.hpp"
#include "load.hpp"
#include "verify.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: xconn-chaos setup|load|verify|audit --port P --key-file F --journal J [--channels N] [--seed S] "
               "[--seconds T] [--timings FILE] [--max-bytes N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string mode = argv[1];
  xconn::chaos::run_options o;
  std::string key_file;
  try {
    for (int i = 2; i + 1 < argc; i += 2) {
      std::string name = argv[i], value = argv[i + 1];
      if (name == "--port") o.daemon.port = static_cast<unsigned short>(std::stoul(value));
      else if (name == "--key-file") key_file = value;
      else if (name == "--journal") o.journal_path = value;
      else if (name == "--channels") o.channels = std::stoi(value);
      else if (name == "--seed") o.seed = static_cast<unsigned>(std::stoul(value));
      else if (name == "--seconds") o.max_seconds = std::stoi(value);
      else if (name == "--timings") o.timings_path = value;
      else if (name == "--max-bytes") o.max_bytes = std::stoull(value);
      else return usage();
    }
    if (argc % 2 != 0) return usage();
  } catch (const std::exception&) {
    return usage();
  }
  if (mode == "audit") {
    if (o.journal_path.empty()) return usage();
    auto entries = xconn::chaos::journal::read(o.journal_path);
    int verify_epoch = xconn::chaos::journal::last_epoch(entries) + 1;
    for (const auto& e : entries)
      if (e.kind == "verify") verify_epoch = e.epoch;
    auto report = xconn::chaos::audit(entries, verify_epoch);
    xconn::chaos::print(report);
    return report.violations() == 0 ? 0 : 1;
  }
  std::ifstream in(key_file);
  std::getline(in, o.daemon.key);
  if (o.daemon.port == 0 || o.daemon.key.empty() || o.journal_path.empty() || o.channels < 1 || o.channels > 64 ||
      o.max_seconds < 1)
    return usage();
  try {
    if (mode == "setup") return xconn::chaos::run_setup(o);
    if (mode == "load") return xconn::chaos::run_load(o);
    if (mode == "verify") return xconn::chaos::run_verify(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xconn-chaos: %s\n", e.what());
    return 2;
  }
  return usage();
}
