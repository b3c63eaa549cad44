#include "support/irc_test_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace xconn::test {

using clock = std::chrono::steady_clock;

irc_test_client::irc_test_client(unsigned short port, const std::string& nick, const std::string& password) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) return;
  if (!password.empty()) send("PASS " + password);
  send("NICK " + nick);
  send("USER " + nick + " 0 * :" + nick);
  registered_ = next([](const irc::line& l) { return l.command == "001" || l.command == "433" || l.command == "ERROR"; })
                    .value_or(irc::line{}).command == "001";
}

irc_test_client::~irc_test_client() {
  if (fd_ >= 0) ::close(fd_);
}

void irc_test_client::send(const std::string& line) {
  std::string out = line + "\r\n";
  for (std::size_t at = 0; at < out.size();) {
    auto n = ::send(fd_, out.data() + at, out.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;
    at += static_cast<std::size_t>(n);
  }
}

bool irc_test_client::join(const std::string& channel) {
  send("JOIN " + channel);
  return next([&](const irc::line& l) { return l.command == "JOIN" && irc::fold(l.param(0)) == irc::fold(channel); })
      .has_value();
}

std::optional<std::string> irc_test_client::read_line(clock::time_point deadline) {
  for (;;) {
    if (auto end = buffer_.find('\n'); end != std::string::npos) {
      auto line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0 || fd_ < 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
    char chunk[4096];
    auto n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::optional<irc::line> irc_test_client::next(const std::function<bool(const irc::line&)>& match,
                                               std::chrono::milliseconds deadline) {
  auto until = clock::now() + deadline;
  while (auto text = read_line(until)) {
    auto l = irc::parse_line(*text);
    if (!l) continue;
    if (l->command == "PING") send("PONG :" + l->param(0));
    if (match(*l)) return l;
  }
  return std::nullopt;
}

std::vector<irc_test_client::said> irc_test_client::privmsgs_from(const std::string& nick, std::size_t count,
                                                                  std::chrono::milliseconds deadline) {
  std::vector<said> out;
  auto until = clock::now() + deadline;
  while (out.size() < count) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now());
    if (left.count() <= 0) break;
    auto l = next([&](const irc::line& m) { return m.command == "PRIVMSG" && irc::fold(m.nick()) == irc::fold(nick); },
                  left);
    if (!l) break;
    out.push_back({l->param(0), l->param(1), clock::now()});
  }
  return out;
}

}  // namespace xconn::test
