// A real binary of the build (xconnd by default) as a child process, its console captured to a file.
#pragma once

#include "support/test_support.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace xconn::test {

class daemon_process {
 public:
  // Starts program (build/bin/xconnd unless named) with args in cwd, extra environment variables set.
  daemon_process(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                 const std::map<std::string, std::string>& env = {},
                 const std::filesystem::path& program = xconnd_path());
  ~daemon_process();  // SIGKILLs a child still running

  std::string console() const;  // everything written to stdout and stderr so far
  // The port from the "listening on HOST:PORT" line, once it appears (0 on deadline).
  unsigned short wait_listening(std::chrono::milliseconds deadline = std::chrono::seconds(20));
  // Waits for the exit; returns the exit code, 128+signal when killed, or -1 on deadline.
  int wait_exit(std::chrono::milliseconds deadline = std::chrono::seconds(20));
  void signal(int sig);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::filesystem::path console_file_;
};

// {folder}/plugins holding a copy of echo alone, for a daemon whose plugin folder the test changes (or that
// must not copy every built plugin into its store's cache); returns that folder.
std::filesystem::path echo_alone_in(const std::filesystem::path& folder);

// The config the daemon tests write: 127.0.0.1 port 0, the API key from XCONN_TEST_KEY, the store in ./var/xconn,
// plugins from plugins_dir; extra is appended after the plugins dir line (more plugins keys, or further sections).
std::string test_daemon_config(const std::filesystem::path& plugins_dir, const std::string& extra = "",
                               std::uint64_t map_size_bytes = 67108864);

// Starts xconnd with folder/xconnd.yaml and XCONN_TEST_KEY=key; port is 0 (and the test failed, with the console)
// when it did not come up.
std::unique_ptr<daemon_process> start_test_daemon(const std::filesystem::path& folder, const std::string& key,
                                                  unsigned short& port);

}  // namespace xconn::test
