// One data-plane socket driven the way xAgent drives it: hello, then requests answered by request_id, with the
// pushes that arrive meanwhile kept aside. Every packet received is checked against the spec's packet schema.
#pragma once

#include "support/wire_client.hpp"

#include <boost/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace xconn::test {

class xagent_session {
 public:
  // Connects to /connectors/{plugin}/ws and completes the hello (ASSERTs); connector_id "" asks for a new one.
  xagent_session(unsigned short port, const std::string& key, const std::string& plugin = "echo",
                 const std::string& card_id = "im.echo", const std::string& connector_id = "",
                 boost::json::array profiles = {"xagent.im.v1", "xagent.im.v2"});

  // Checks every packet not yet checked against the packet schema.
  ~xagent_session();
  xagent_session(const xagent_session&) = delete;
  xagent_session& operator=(const xagent_session&) = delete;

  bool ok() const { return ws_ != nullptr && !connector_id_.empty(); }
  const std::string& connector_id() const { return connector_id_; }
  ws_client& ws() { return *ws_; }

  // Sends packet and returns the answer to it (the packet whose reply_to is its packet_id), or an empty
  // object when none came within the deadline.
  boost::json::object request(const boost::json::object& packet,
                              std::chrono::milliseconds deadline = std::chrono::seconds(10));
  // A packet of type on channel with payload; returns its answer.
  boost::json::object call(const std::string& type, const std::string& channel, boost::json::object payload = {});

  // channel.open (requested "" creates); returns the ack.
  boost::json::object open(const std::string& requested = "");
  // auth.start of echo_token with token; returns the ack.
  boost::json::object sign_in(const std::string& channel, const std::string& token);
  boost::json::object invoke(const std::string& channel, const std::string& tool, boost::json::object arguments,
                             boost::json::object context = {});

  // Pushes received while waiting for answers, oldest first; taken (and cleared) by the caller.
  std::vector<boost::json::object> take_pushes();
  // Waits for a push of type (already received or arriving within deadline).
  std::optional<boost::json::object> wait_push(const std::string& type,
                                               std::chrono::milliseconds deadline = std::chrono::seconds(5));
  // Every text frame received so far, for secret checks.
  const std::string& transcript() const { return transcript_; }
  // Schema violations of every packet received so far ("" when all were valid); checked in one batch.
  std::string violations();

 private:
  std::optional<boost::json::object> receive(std::chrono::milliseconds deadline);

  std::unique_ptr<ws_client> ws_;
  std::string connector_id_;
  std::vector<boost::json::object> pushes_;
  std::string transcript_;
  std::vector<std::string> unchecked_;
};

// The error code of a packet (type error, or an ack's envelope error); "" when none.
std::string error_code_of(const boost::json::object& packet);
// payload.connection_descriptor of an ack or push.
const boost::json::object& descriptor_of(const boost::json::object& packet);
std::string status_of_descriptor(const boost::json::object& packet);

}  // namespace xconn::test
