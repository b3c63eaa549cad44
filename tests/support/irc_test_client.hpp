// A person on the test IRC server: a blocking client that registers a nick, joins channels, says things and reads
// what arrives, each wait bounded by a deadline. Lines are parsed with the plugin's own parser (plugins/irc).
#pragma once

#include "plugins/irc/irc_line.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace xconn::test {

class irc_test_client {
 public:
  // Connects to 127.0.0.1:port and registers nick (with the server password, if any); registered() says whether
  // the server welcomed it within 10 s.
  irc_test_client(unsigned short port, const std::string& nick, const std::string& password = "");
  ~irc_test_client();
  irc_test_client(const irc_test_client&) = delete;
  irc_test_client& operator=(const irc_test_client&) = delete;

  bool registered() const { return registered_; }
  void send(const std::string& line);  // CR LF added
  // JOIN, then waits for the server to confirm it.
  bool join(const std::string& channel);
  // The next line matching, or nullopt at the deadline; lines before it are dropped.
  std::optional<irc::line> next(const std::function<bool(const irc::line&)>& match,
                                std::chrono::milliseconds deadline = std::chrono::seconds(10));
  // The bodies of the next count PRIVMSGs from nick (to anyone), with when each arrived; fewer at the deadline.
  struct said {
    std::string target;
    std::string text;
    std::chrono::steady_clock::time_point at;
  };
  std::vector<said> privmsgs_from(const std::string& nick, std::size_t count,
                                  std::chrono::milliseconds deadline = std::chrono::seconds(30));

 private:
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
  std::string buffer_;
  bool registered_ = false;
};

}  // namespace xconn::test
