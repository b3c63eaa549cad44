#include "support/fake_chat.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <utility>

namespace xconn::test {

struct fake_chat::client {
  int fd = -1;
  std::string user;
  bool live = false;  // signed in and past SINCE: room messages go to it
};

fake_chat::fake_chat(std::map<std::string, std::string> passwords) : passwords_(std::move(passwords)) { listen(); }

fake_chat::~fake_chat() { go_away(); }

void fake_chat::listen() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port_);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    throw std::runtime_error("fake_chat: cannot listen");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  std::lock_guard lock(mutex_);
  listener_ = fd;
  threads_.emplace_back([this, fd] { accept_loop(fd); });
}

void fake_chat::accept_loop(int listener) {
  for (;;) {
    int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;  // go_away shut the listener
    auto c = std::make_shared<client>();
    c->fd = fd;
    std::lock_guard lock(mutex_);
    if (listener_ != listener) {
      ::close(fd);
      return;
    }
    clients_.push_back(c);
    threads_.emplace_back([this, c] { serve(c); });
  }
}

void fake_chat::send_to(client& c, const std::string& line) {
  std::string out = line + "\n";
  (void)!::send(c.fd, out.data(), out.size(), MSG_NOSIGNAL);
}

void fake_chat::serve(std::shared_ptr<client> c) {
  std::string buffer;
  char chunk[4096];
  for (;;) {
    auto n = ::recv(c->fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (auto end = buffer.find('\n'); end != std::string::npos; end = buffer.find('\n')) {
      std::string line = buffer.substr(0, end);
      buffer.erase(0, end + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      auto space = line.find(' ');
      std::string verb = line.substr(0, space), rest = space == std::string::npos ? "" : line.substr(space + 1);
      std::lock_guard lock(mutex_);
      if (verb == "HELLO") {
        auto split = rest.find(' ');
        std::string user = rest.substr(0, split), password = split == std::string::npos ? "" : rest.substr(split + 1);
        auto it = passwords_.find(user);
        if (it == passwords_.end() || it->second != password) {
          send_to(*c, "ERR denied");
          continue;
        }
        c->user = user;
        ++sign_ins_;
        send_to(*c, "OK lobby " + std::to_string(history_.size()));
      } else if (c->user.empty()) {
        send_to(*c, "ERR not_signed_in");
      } else if (verb == "SINCE") {
        long since = std::stol(rest.empty() ? "0" : rest);
        sinces_.push_back(since);
        for (std::size_t i = static_cast<std::size_t>(std::max(since, 0L)); i < history_.size(); ++i)
          send_to(*c, history_[i]);
        c->live = true;
      } else if (verb == "SEND") {
        sent_.push_back(c->user + ": " + rest);
        auto seq = std::to_string(history_.size() + 1);
        history_.push_back("MSG " + seq + " " + c->user + " " + rest);
        for (auto& other : clients_)
          if (other != c && other->live) send_to(*other, history_.back());
        send_to(*c, "SENT " + seq);
      } else {
        send_to(*c, "ERR unknown_verb");
      }
    }
  }
  std::lock_guard lock(mutex_);
  c->live = false;
}

void fake_chat::say(const std::string& from, const std::string& text) {
  std::lock_guard lock(mutex_);
  history_.push_back("MSG " + std::to_string(history_.size() + 1) + " " + from + " " + text);
  for (auto& c : clients_)
    if (c->live) send_to(*c, history_.back());
}

std::vector<std::string> fake_chat::sent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}
int fake_chat::sign_ins() const {
  std::lock_guard lock(mutex_);
  return sign_ins_;
}
int fake_chat::open_connections() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& c : clients_) n += c->live ? 1 : 0;
  return n;
}
std::vector<long> fake_chat::sinces() const {
  std::lock_guard lock(mutex_);
  return sinces_;
}
void fake_chat::set_password(const std::string& user, const std::string& password) {
  std::lock_guard lock(mutex_);
  passwords_[user] = password;
}

void fake_chat::go_away() {
  std::vector<std::thread> threads;
  int listener = -1;
  {
    std::lock_guard lock(mutex_);
    listener = std::exchange(listener_, -1);  // a connection accepted from now on is closed at once
    if (listener >= 0) ::shutdown(listener, SHUT_RDWR);
    for (auto& c : clients_) ::shutdown(c->fd, SHUT_RDWR);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  if (listener >= 0) ::close(listener);
  std::lock_guard lock(mutex_);
  for (auto& c : clients_) ::close(c->fd);
  clients_.clear();
}

void fake_chat::come_back() { listen(); }

}  // namespace xconn::test
