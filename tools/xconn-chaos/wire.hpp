// The driver's view of the wire: one HTTP request at a time and one WebSocket data-plane socket, each bounded
// by a deadline, on loopback only.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace xconn::chaos {

struct http_answer {
  int status = 0;  // 0: no answer (refused, reset, or the deadline passed)
  std::string body;
  boost::json::value json() const;  // null when the body is not JSON
};

http_answer http_request(unsigned short port, const std::string& method, const std::string& target,
                         const std::map<std::string, std::string>& headers, const std::string& body,
                         std::chrono::milliseconds deadline = std::chrono::seconds(10));

class ws_socket {
 public:
  // Connects to /connectors/{plugin}/ws with the key and the packet subprotocol; nullptr on failure.
  static std::unique_ptr<ws_socket> connect(unsigned short port, const std::string& plugin, const std::string& key);
  ~ws_socket();
  ws_socket(const ws_socket&) = delete;
  ws_socket& operator=(const ws_socket&) = delete;

  bool send(const boost::json::object& packet);  // false once the socket is gone
  // The next packet within the deadline; nullopt when none came in time or the socket is gone (see closed()).
  std::optional<boost::json::object> receive(std::chrono::milliseconds deadline);
  bool closed() const;

 private:
  ws_socket();
  struct state;
  std::unique_ptr<state> s_;
};

// A packet envelope with a fresh packet_id and request_id (returned in request_id).
boost::json::object make_packet(const std::string& type, boost::json::object payload, const std::string& channel,
                                std::string* request_id = nullptr);

// payload.{name} as a string, "" when absent.
std::string text_at(const boost::json::object& o, const char* name);
const boost::json::object& payload_of(const boost::json::object& packet);

}  // namespace xconn::chaos
