// Which plugin builds killed the process during their start, so that a restart refuses them instead of crashing
// again (a crash loop under systemd or Kubernetes). A crash cannot be caught from inside, so it is inferred: a
// marker `starting-<sha256>` is written into the plugin cache before a generation's start and removed when start
// returns, ok or not. A marker found at the next start-up means the process died during that start; it
// becomes a record `crashed-<sha256>`, and every file with that sha256 is refused until the record is deleted (a
// new build has a new sha256). Files, not store records: they work even when the store cannot open.
#pragma once

#include <filesystem>
#include <string>

namespace xconn {

// At start-up, before any plugin starts: turns every marker the last run left into a record, one log line each.
void collect_start_markers(const std::filesystem::path& cache_dir);

// "" unless the build with this sha256 is recorded as having crashed the process in its start; else the refusal
// reason, naming the record to delete.
std::string crashed_start_refusal(const std::filesystem::path& cache_dir, const std::string& sha256);

// The marker of one start. It must outlive the death of the process, which the kernel's page cache guarantees
// without a sync: a power loss during a start is no fault of the build, so no fsync delays the start (at a reload
// the plugin's calls are held meanwhile). Its removal must outlive a power loss, or an innocent build would be
// blamed at the next start: returned() deletes it at once, and the folder is synced at destruction, which the
// registry places after the pause.
class start_marker {
 public:
  start_marker(const std::filesystem::path& cache_dir, const std::string& sha256, const std::string& plugin_id,
               const std::filesystem::path& file);
  ~start_marker();
  start_marker(const start_marker&) = delete;
  start_marker& operator=(const start_marker&) = delete;

  // Start returned (ok or not): the marker goes.
  void returned();

 private:
  std::filesystem::path path_;  // empty when it could not be written
  bool removed_ = false;
};

}  // namespace xconn
