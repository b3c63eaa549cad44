// Shared test helpers: temporary folders, waiting on conditions with deadlines, paths of built artifacts.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace xconn::test {

// A fresh folder under the system temp dir, removed with everything in it when the object dies.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Polls cond every few milliseconds until it is true or the deadline passes; returns the last value.
bool wait_until(const std::function<bool()>& cond,
                std::chrono::milliseconds deadline = std::chrono::seconds(10));

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& text);
// A loopback TCP port that was free a moment ago, for a server of Debian's that needs its port in its config.
unsigned short free_loopback_port();

// Where the build put things.
std::filesystem::path plugin_dir();          // build/plugins (echo.so)
std::filesystem::path fixture_plugin_dir();  // build/test-plugins (fixture plugins)
std::filesystem::path xconnd_path();         // build/bin/xconnd
std::filesystem::path load_tool_path();      // build/bin/xconn-load
std::filesystem::path ws_ceiling_path();     // build/bin/ws_ceiling
std::filesystem::path source_dir();          // the repository root

}  // namespace xconn::test
