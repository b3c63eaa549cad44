// The webhook plugin's counterpart on this machine: a receiver of signed POSTs (Beast on a loopback port, its own
// thread) that checks each signature with the channel's secret and answers as a test scripts it; a sender's
// signature; and a keep-alive HTTP client for sending many POSTs over one connection.
#pragma once

#include "support/test_support.hpp"
#include "support/wire_client.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace xconn::test {

// X-Xconn-Signature for body signed with secret at t: "t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>" (written
// here apart from the plugin's code, so the two check each other).
std::string webhook_signature(const std::string& secret, std::int64_t t, const std::string& body);
std::int64_t unix_now();

class webhook_receiver {
 public:
  struct request {
    std::string method;  // "POST", or "HEAD" for the plugin's outage probe
    std::string target;
    std::string body;
    std::map<std::string, std::string> headers;  // lowercase names
    bool signature_ok = false;                   // v1 matches and t is within 300 s of now
    std::chrono::steady_clock::time_point at;
    boost::json::object json() const;  // the body parsed (empty when it is not an object)
  };

  // tls: HTTPS with a certificate for 127.0.0.1 made for it (ca_file() names it).
  explicit webhook_receiver(std::string secret, bool tls = false);
  ~webhook_receiver();
  webhook_receiver(const webhook_receiver&) = delete;
  webhook_receiver& operator=(const webhook_receiver&) = delete;

  unsigned short port() const { return port_; }
  std::string url(const std::string& path = "/hook") const {
    return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_) + path;
  }
  std::string ca_file() const;

  // The statuses the next requests get, in order; after them every request gets 200. 0 never answers (the
  // connection is held open until the receiver goes).
  void script(std::vector<int> statuses);
  std::vector<request> requests() const;
  std::size_t count() const;
  // The requests of one method only, in order.
  std::vector<request> requests(const std::string& method) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  unsigned short port_ = 0;
  bool tls_ = false;
};

// One connection to 127.0.0.1:port kept open for many requests (a sender that reuses its connection).
class keepalive_client {
 public:
  explicit keepalive_client(unsigned short port);
  ~keepalive_client();
  // status 0 when the connection failed (it is opened again for the next request).
  http_reply post(const std::string& target, const std::map<std::string, std::string>& headers, const std::string& body);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace xconn::test
