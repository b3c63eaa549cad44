// A raw HTTP/1.1 client over one loopback TCP connection, for what Beast's high-level calls cannot express in a
// test: a body streamed piece by piece (or never sent), a Content-Length that lies, chunked request bodies,
// Expect: 100-continue, HEAD answers read without a body, and response bodies streamed into a sink instead of
// memory. Every step is bounded by a deadline; nothing here can hang a test.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace xconn::test {

struct raw_response {
  int status = 0;
  std::string head;                            // the status line and header lines, as received
  std::map<std::string, std::string> headers;  // lower-case names (a repeated name keeps the last value)
  std::string body;                            // de-chunked; empty when a sink took it
  std::uint64_t body_bytes = 0;                // how many body bytes arrived (also with a sink)
  std::string header(const std::string& lower_name) const;  // "" when absent
  boost::json::value json() const;                          // null when the body is not JSON
  std::string error_code() const;                           // body.error.code, "" when none
};

class raw_http {
 public:
  // Connects to 127.0.0.1:port; nullptr when that fails within the deadline.
  static std::unique_ptr<raw_http> connect(unsigned short port,
                                           std::chrono::milliseconds deadline = std::chrono::seconds(5));
  ~raw_http();
  raw_http(const raw_http&) = delete;
  raw_http& operator=(const raw_http&) = delete;

  // Writes every byte before the deadline; false when the peer closed or reset the connection, or time ran out.
  bool send(std::string_view bytes, std::chrono::milliseconds deadline = std::chrono::seconds(10));
  // Whether a byte, or the end of the stream, can be read within the wait (bytes already buffered count).
  bool readable(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Reads one response. Its body is framed by Content-Length, chunked coding, or the end of the stream; there is
  // none for 1xx, 204, 304, or when head_request is true. With a sink, every body byte goes to it instead of
  // into body. nullopt when the stream ended or the deadline passed before the whole response arrived.
  std::optional<raw_response> read_response(std::chrono::milliseconds deadline = std::chrono::seconds(10),
                                            bool head_request = false,
                                            const std::function<void(std::string_view)>& sink = {});
  // Everything still buffered or arriving until the peer closes or the deadline passes.
  std::string read_to_end(std::chrono::milliseconds deadline = std::chrono::seconds(5));
  // Whether the peer closed (read returned end of stream or a reset) within the wait.
  bool closed_within(std::chrono::milliseconds wait);
  void shutdown_write();

 private:
  using body_sink = std::function<void(std::string_view)>;

  explicit raw_http(int fd) : fd_(fd) {}
  // Reads more into buf_ until the deadline; false at the end of the stream, on an error, or when time ran out.
  bool fill(std::chrono::steady_clock::time_point until);
  // The status line and the headers; false when they did not come whole or are not HTTP/1.x.
  bool read_head(raw_response& r, std::chrono::steady_clock::time_point until);
  // A body's three framings: chunked coding (its trailers skipped), a length, and the end of the stream. Each
  // hands the body bytes to take and is false when the body did not come whole.
  bool read_chunked_body(std::chrono::steady_clock::time_point until, const body_sink& take);
  bool skip_trailers(std::chrono::steady_clock::time_point until);
  bool pass_body_bytes(std::uint64_t count, std::chrono::steady_clock::time_point until, const body_sink& take);
  bool read_body_to_end(std::chrono::steady_clock::time_point until, const body_sink& take);

  int fd_ = -1;
  std::string buf_;
  bool eof_ = false;
};

// "METHOD target HTTP/1.1\r\nHost: 127.0.0.1\r\n<headers>\r\n": the head of a request, sent exactly as given
// (no Content-Length is added).
std::string request_head(const std::string& method, const std::string& target,
                         const std::map<std::string, std::string>& headers);

// One whole request on a new connection ("Connection: close" added); nullopt when no whole response came.
std::optional<raw_response> raw_request(unsigned short port, const std::string& method, const std::string& target,
                                        std::map<std::string, std::string> headers, std::string_view body = {},
                                        bool head_request = false,
                                        std::chrono::milliseconds deadline = std::chrono::seconds(10));

}  // namespace xconn::test
