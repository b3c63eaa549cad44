// One socket of a load run and the channels it carries, on one client thread: the set-up (hello, channel.open,
// auth.start with echo's token flow) and the scenario's operations, each answered before its slot sends the next.
#pragma once

#include "load_run.hpp"
#include "load_socket.hpp"
#include "payload_fields.hpp"

#include "core/wire/packet.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace xconn::load {

class load_driver : public std::enable_shared_from_this<load_driver> {
 public:
  load_driver(boost::asio::io_context& io, run_state& run, int index, int channels);

  // Connects and, against xconnd, says hello and signs in every channel; done("") or done(why not).
  void set_up(const upgrade_request& request, std::function<void(std::string)> done);
  void start();   // every channel slot begins its operations
  void finish();  // the run is over: counts what is still unanswered and closes the socket
  driver_totals take_totals() { return std::move(totals_); }
  const std::string& first_channel_id() const { return channels_.front().id; }

 private:
  using clock = std::chrono::steady_clock;
  enum class op_kind { hello, open, auth, invoke, final_message, burst, send_message };
  struct pending_op {
    op_kind kind;
    int channel;
    clock::time_point sent;
    std::uint64_t reserved = 1;  // operations this one stands for (a burst: its messages)
  };
  struct channel_state {
    std::string id;
    int mixed_step = 0;
    // inbound: the burst in flight
    std::uint64_t burst_no = 0;
    std::uint64_t burst_size = 0, burst_received = 0;
    bool burst_answered = false;
    clock::time_point burst_sent;
    std::vector<bool> burst_seen;
    // mixed: echo_send_message calls answered whose far-side reply has not arrived yet (when they were sent),
    // and replies that came before their call's answer
    std::deque<clock::time_point> awaiting_reply;
    int early_replies = 0;
  };

  void on_frame(std::string_view frame);
  void on_answer(const pending_op& op, const packet_view& answer);
  void on_chat_message(const packet_view& push);
  void set_up_next_channel();
  void end_set_up(const std::string& why);

  void next_operation(int channel);  // a slot is free again (unless the run is paced)
  void send_operation(int channel);
  void pace();                       // --rate: sends what is due, then waits a millisecond
  void send_invoke(int channel, op_kind kind, std::string_view tool, const std::string& arguments);
  void send_outbound(int channel);
  void send_burst(int channel, std::uint64_t count);
  void end_operation(std::string_view error_code);  // "" when it succeeded
  void maybe_end_burst(int channel);

  std::uint64_t send_request(op_kind kind, int channel, std::string_view type, std::string_view channel_id,
                             std::string_view payload, std::uint64_t reserved = 1);
  void send_frame(std::string frame);
  std::string request_id(std::uint64_t n) const;

  run_state& run_;
  const int index_;
  std::shared_ptr<load_socket> socket_;
  packet_decoder decoder_;
  payload_reader payload_reader_;
  std::vector<channel_state> channels_;
  std::unordered_map<std::string, int> channel_index_;
  std::unordered_map<std::uint64_t, pending_op> pending_;
  std::uint64_t next_request_ = 0;
  std::uint64_t next_message_ = 0;
  const std::string text_;
  driver_totals totals_;
  std::function<void(std::string)> set_up_done_;
  std::size_t channels_opening_ = 0, channels_ready_ = 0;
  bool finished_ = false;
  boost::asio::steady_timer pacer_;
  clock::time_point paced_since_;
  std::uint64_t paced_sent_ = 0;
};

}  // namespace xconn::load
