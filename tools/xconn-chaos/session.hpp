// One data-plane socket of the driver for one epoch (one daemon lifetime): hello with the kept connector_id,
// channels opened, finals, side-effect tools and inbound acks sent, and every answer and push journaled.
//
// An inbound ack is never answered, so its durability is inferred: the store commits in the order writes are
// queued, the server handles a socket's frames in order, and the ack's erase is queued while its frame is
// handled. So when a request sent after some acks gets an answer that the server gives only once its own write
// is committed (a fresh final's "accepted", a fresh side-effect tool's result), every ack sent before that
// request is durable: the session journals "confirm" up to it.
#pragma once

#include "journal.hpp"
#include "wire.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace xconn::chaos {

struct delivery {
  std::string channel;
  std::string message_id;
};

class session {
 public:
  session(unsigned short port, std::string key, journal& j, int epoch);

  // Hello (naming connector_id when not empty) and channel.open of each channel; false when the daemon is gone.
  bool start(const std::string& connector_id, const std::vector<std::string>& channels);
  const std::string& connector_id() const { return connector_id_; }
  // channel.open with no id, then sign-in with echo_token; "" on failure.
  std::string new_signed_in_channel();

  void send_final(const std::string& channel, const std::string& message_id, bool fresh);
  void send_tool(const std::string& channel, const std::string& key, bool fresh);
  void ack(const std::string& channel, const std::string& message_id);

  // Handles what arrives within wait (at least one receive); false once the socket is gone.
  bool pump(std::chrono::milliseconds wait);
  // Pumps until every request sent has its answer or the deadline passed; false when it did not come to that.
  bool settle(std::chrono::milliseconds deadline);
  bool alive() const { return ws_ && !ws_->closed(); }
  std::size_t outstanding() const { return requests_.size(); }
  long long acks_sent() const { return ack_seq_; }
  long long acks_confirmed() const { return confirmed_; }

  // Called as start() passes its steps: "connected", "hello", "channels".
  std::function<void(const char*)> on_step;
  // Called for every chat.message pushed (after it is journaled).
  std::function<void(const delivery&)> on_delivery;
  // Answers seen, for the caller's own lists: final message_id -> status; tool key -> result message_id.
  std::function<void(const std::string&, const std::string&)> on_final_answer;
  std::function<void(const std::string&, const std::string&)> on_tool_answer;

 private:
  struct request {
    std::string kind;  // final | tool | open | auth
    std::string id;
    bool fresh = false;
    long long acks_before = 0;
  };
  std::optional<boost::json::object> call(const std::string& type, boost::json::object payload,
                                          const std::string& channel);
  void handle(const boost::json::object& packet);
  void confirm(long long upto);

  unsigned short port_;
  std::string key_;
  journal& journal_;
  int epoch_;
  std::unique_ptr<ws_socket> ws_;
  std::string connector_id_;
  std::map<std::string, request> requests_;  // by request_id
  long long ack_seq_ = 0;
  long long confirmed_ = 0;
};

}  // namespace xconn::chaos
