// A real client for the server's wire: HTTP requests and a WebSocket data-plane connection (Beast, kept in
// wire_client.cpp so that the many tests including this parse none of it), each bounded by a deadline.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace xconn::test {

struct http_reply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  boost::json::value json() const;             // the body parsed (null when it is not JSON)
};

http_reply http_call(unsigned short port, const std::string& method, const std::string& target,
                     const std::map<std::string, std::string>& headers = {}, const std::string& body = "");
inline http_reply http_get(unsigned short port, const std::string& target, const std::string& key = "") {
  std::map<std::string, std::string> h;
  if (!key.empty()) h["Authorization"] = "Bearer " + key;
  return http_call(port, "GET", target, h);
}

class ws_client {
 public:
  struct options {
    std::string key;
    std::string subprotocol = "xagent.connector.packet.v1";  // "" offers none
  };
  // Connects and upgrades; on failure returns nullptr with the HTTP status (or 0) in failed_status.
  static std::unique_ptr<ws_client> connect(unsigned short port, const std::string& target, const options& opts,
                                            int* failed_status = nullptr);

  void send(const std::string& text);
  void send_json(const boost::json::object& packet) { send(boost::json::serialize(packet)); }
  // The next text message, or nullopt when the socket closed or the deadline passed.
  std::optional<std::string> receive(std::chrono::milliseconds deadline = std::chrono::seconds(5));
  std::optional<boost::json::object> receive_json(std::chrono::milliseconds deadline = std::chrono::seconds(5));
  // Reads until the peer closes; returns the close code, or -1 when the deadline passed first.
  int wait_closed(std::chrono::milliseconds deadline = std::chrono::seconds(5));
  bool closed() const;
  std::string selected_subprotocol() const;
  // A binary frame (the data plane takes text only).
  bool send_binary(const std::string& bytes);
  // Reads and discards what the server sent without answering it as a WebSocket would (no pong); true once the
  // server closed the TCP connection. Never blocks.
  bool drain_raw_until_closed();

  // A hello with the given overrides merged into a valid payload; returns the answer.
  std::optional<boost::json::object> hello(const boost::json::object& payload_overrides = {});

 private:
  ws_client();
  struct state;
  std::unique_ptr<state> s_;

 public:
  ~ws_client();
};

// A packet envelope with a fresh packet_id and request_id.
boost::json::object make_packet(const std::string& type, boost::json::object payload = {},
                                const std::string& connector_channel_id = "");

}  // namespace xconn::test
