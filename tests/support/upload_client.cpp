#include "support/upload_client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace xconn::test {
namespace json = boost::json;
using steady = std::chrono::steady_clock;

namespace {

int remaining_ms(steady::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1'000'000));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

std::string raw_response::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

json::value raw_response::json() const {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  return ec ? json::value() : v;
}

std::string raw_response::error_code() const {
  auto v = json();
  if (!v.is_object()) return "";
  auto* e = v.as_object().if_contains("error");
  if (!e || !e->is_object()) return "";
  auto* c = e->as_object().if_contains("code");
  return c && c->is_string() ? std::string(c->as_string()) : std::string();
}

std::unique_ptr<raw_http> raw_http::connect(unsigned short port, std::chrono::milliseconds deadline) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return nullptr;
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) {
      ::close(fd);
      return nullptr;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, static_cast<int>(deadline.count())) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      ::close(fd);
      return nullptr;
    }
  }
  return std::unique_ptr<raw_http>(new raw_http(fd));
}

raw_http::~raw_http() {
  if (fd_ >= 0) ::close(fd_);
}

bool raw_http::send(std::string_view bytes, std::chrono::milliseconds deadline) {
  auto until = steady::now() + deadline;
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      int ms = remaining_ms(until);
      if (ms == 0) return false;
      int r = ::poll(&p, 1, ms);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      if (p.revents & (POLLERR | POLLHUP)) return false;
      continue;
    }
    return false;  // EPIPE, ECONNRESET, ...
  }
  return true;
}

bool raw_http::fill(steady::time_point until) {
  if (eof_) return false;
  std::array<char, 65536> chunk{};
  for (;;) {
    ssize_t n = ::recv(fd_, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      buf_.append(chunk.data(), static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {  // a reset ends the stream; what was buffered stays
      eof_ = true;
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    int ms = remaining_ms(until);
    if (ms == 0) return false;
    int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
  }
}

bool raw_http::readable(std::chrono::milliseconds wait) {
  if (!buf_.empty() || eof_) return true;
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(wait.count()));
  return r == 1;
}

bool raw_http::closed_within(std::chrono::milliseconds wait) {
  auto until = steady::now() + wait;
  while (!eof_) {
    if (!fill(until) && !eof_) return false;
  }
  return true;
}

void raw_http::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

std::string raw_http::read_to_end(std::chrono::milliseconds deadline) {
  auto until = steady::now() + deadline;
  while (fill(until)) {
  }
  std::string out;
  out.swap(buf_);
  return out;
}

std::optional<raw_response> raw_http::read_response(std::chrono::milliseconds deadline, bool head_request,
                                                    const std::function<void(std::string_view)>& sink) {
  auto until = steady::now() + deadline;
  raw_response r;
  if (!read_head(r, until)) return std::nullopt;
  if (head_request || (r.status >= 100 && r.status < 200) || r.status == 204 || r.status == 304) return r;
  auto take = [&](std::string_view bytes) {
    r.body_bytes += bytes.size();
    if (sink)
      sink(bytes);
    else
      r.body.append(bytes);
  };
  bool whole = false;
  if (lower(r.header("transfer-encoding")).find("chunked") != std::string::npos) {
    whole = read_chunked_body(until, take);
  } else if (auto cl = r.header("content-length"); !cl.empty()) {
    std::uint64_t length = 0;
    try {
      length = std::stoull(cl);
    } catch (...) {
      return std::nullopt;
    }
    whole = pass_body_bytes(length, until, take);
  } else {
    whole = read_body_to_end(until, take);
  }
  if (!whole) return std::nullopt;
  return r;
}

bool raw_http::read_head(raw_response& r, steady::time_point until) {
  std::size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
    if (buf_.size() > 1024 * 1024) return false;
    if (!fill(until)) return false;
  }
  r.head = buf_.substr(0, end + 2);
  buf_.erase(0, end + 4);
  // Status line.
  auto first_eol = r.head.find("\r\n");
  std::string status_line = r.head.substr(0, first_eol);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return false;
  r.status = std::atoi(status_line.substr(9, 3).c_str());
  // Header lines.
  std::size_t pos = first_eol + 2;
  while (pos < r.head.size()) {
    auto eol = r.head.find("\r\n", pos);
    if (eol == std::string::npos) eol = r.head.size();
    std::string line = r.head.substr(pos, eol - pos);
    pos = eol + 2;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    r.headers[lower(trim(line.substr(0, colon)))] = trim(std::string_view(line).substr(colon + 1));
  }
  return true;
}

bool raw_http::read_chunked_body(steady::time_point until, const body_sink& take) {
  for (;;) {
    std::size_t eol;
    while ((eol = buf_.find("\r\n")) == std::string::npos) {
      if (buf_.size() > 4096 || !fill(until)) return false;
    }
    std::string size_line = buf_.substr(0, eol);
    buf_.erase(0, eol + 2);
    if (auto semi = size_line.find(';'); semi != std::string::npos) size_line.resize(semi);
    std::size_t size = 0;
    try {
      size = std::stoull(trim(size_line), nullptr, 16);
    } catch (...) {
      return false;
    }
    if (size == 0) return skip_trailers(until);
    if (!pass_body_bytes(size, until, take)) return false;
    while (buf_.size() < 2) {
      if (!fill(until)) return false;
    }
    buf_.erase(0, 2);  // the chunk's CRLF
  }
}

bool raw_http::skip_trailers(steady::time_point until) {
  for (;;) {
    std::size_t eol;
    while ((eol = buf_.find("\r\n")) == std::string::npos) {
      if (!fill(until)) return false;
    }
    bool empty = eol == 0;
    buf_.erase(0, eol + 2);
    if (empty) return true;
  }
}

bool raw_http::pass_body_bytes(std::uint64_t count, steady::time_point until, const body_sink& take) {
  while (count > 0) {
    if (buf_.empty() && !fill(until)) return false;
    auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count, buf_.size()));
    take(std::string_view(buf_).substr(0, n));
    buf_.erase(0, n);
    count -= n;
  }
  return true;
}

bool raw_http::read_body_to_end(steady::time_point until, const body_sink& take) {
  for (;;) {
    if (!buf_.empty()) {
      take(buf_);
      buf_.clear();
    }
    if (!fill(until)) {
      if (!eof_) return false;
      take(buf_);
      buf_.clear();
      return true;
    }
  }
}

std::string request_head(const std::string& method, const std::string& target,
                         const std::map<std::string, std::string>& headers) {
  std::string head = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [k, v] : headers) head += k + ": " + v + "\r\n";
  head += "\r\n";
  return head;
}

std::optional<raw_response> raw_request(unsigned short port, const std::string& method, const std::string& target,
                                        std::map<std::string, std::string> headers, std::string_view body,
                                        bool head_request, std::chrono::milliseconds deadline) {
  auto c = raw_http::connect(port);
  if (!c) return std::nullopt;
  headers.emplace("Connection", "close");
  if (!body.empty() && !headers.contains("Content-Length") && !headers.contains("Transfer-Encoding"))
    headers["Content-Length"] = std::to_string(body.size());
  auto until = steady::now() + deadline;
  // A server may answer before it reads the whole body (401, 413): a failed send still leaves its answer to read.
  c->send(request_head(method, target, headers), deadline);
  if (!body.empty()) c->send(body, std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now()));
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now());
    auto r = c->read_response(std::max(left, std::chrono::milliseconds(1)), head_request);
    if (!r || r->status >= 200 || r->status < 100) return r;  // an interim 1xx is skipped
  }
}

}  // namespace xconn::test
