#include "support/daemon_process.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <stdexcept>
#include <thread>

namespace xconn::test {

daemon_process::daemon_process(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                               const std::map<std::string, std::string>& env,
                               const std::filesystem::path& program) {
  static int counter = 0;
  console_file_ = cwd / ("console-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".log");
  int fd = ::open(console_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create the console file");
  std::string binary = program.string();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    // Nothing else of the test goes with it: an inherited socket (a data-plane client's, a listener) would outlive
    // its close in the test and hold the connection open as long as the child runs.
    ::close_range(3, ~0U, 0);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv{binary.data()};
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fd);
}

daemon_process::~daemon_process() {
  if (pid_ > 0 && status_ < 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::string daemon_process::console() const { return read_file(console_file_); }

unsigned short daemon_process::wait_listening(std::chrono::milliseconds deadline) {
  static const std::regex line("listening on [^ ]+:([0-9]+)");
  unsigned short port = 0;
  wait_until(
      [&] {
        std::smatch m;
        auto text = console();
        if (std::regex_search(text, m, line)) port = static_cast<unsigned short>(std::stoi(m[1]));
        return port != 0;
      },
      deadline);
  return port;
}

int daemon_process::wait_exit(std::chrono::milliseconds deadline) {
  if (status_ >= 0) return status_;
  wait_until(
      [&] {
        int st = 0;
        if (::waitpid(pid_, &st, WNOHANG) != pid_) return false;
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return true;
      },
      deadline);
  return status_;
}

void daemon_process::signal(int sig) { ::kill(pid_, sig); }

std::filesystem::path echo_alone_in(const std::filesystem::path& folder) {
  auto plugins = folder / "plugins";
  std::filesystem::create_directories(plugins);
  std::filesystem::copy_file(plugin_dir() / "echo.so", plugins / "echo.so");
  return plugins;
}

std::string test_daemon_config(const std::filesystem::path& plugins_dir, const std::string& extra,
                               std::uint64_t map_size_bytes) {
  return "server:\n  listen: \"127.0.0.1:0\"\n  api_keys: [\"${XCONN_TEST_KEY}\"]\nstore:\n"
         "  path: \"./var/xconn\"\n  map_size_bytes: " +
         std::to_string(map_size_bytes) + "\nplugins:\n  dir: \"" + plugins_dir.string() + "\"\n" + extra;
}

std::unique_ptr<daemon_process> start_test_daemon(const std::filesystem::path& folder, const std::string& key,
                                                  unsigned short& port) {
  auto d = std::make_unique<daemon_process>(std::vector<std::string>{"--config", "xconnd.yaml"}, folder,
                                            std::map<std::string, std::string>{{"XCONN_TEST_KEY", key}});
  port = d->wait_listening();
  EXPECT_NE(port, 0) << d->console();
  return d;
}

}  // namespace xconn::test
