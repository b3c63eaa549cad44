#include "load_driver.hpp"

#include <charconv>

namespace xconn::load {
namespace {

constexpr std::size_t set_up_concurrency = 64;  // channels signing in at once per socket
const std::string load_token = "load-token";    // echo signs in any token but "invalid"

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A string the generated JSON can carry unescaped.
std::string json_string(std::string_view text) { return "\"" + std::string(text) + "\""; }

// "cch_" + 22 characters, the length of a real channel id, so that ceiling frames weigh what xconnd's do.
std::string ceiling_channel_id(int socket, int channel) {
  std::string id = "cch_ceiling" + std::to_string(socket) + "x" + std::to_string(channel);
  id.resize(26, '0');
  return id;
}

// "<channel>.<burst> #<i>" as echo_burst numbers its messages.
bool parse_burst_text(std::string_view text, std::uint64_t& burst, std::uint64_t& i) {
  auto dot = text.find('.'), hash = text.find(" #");
  if (dot == std::string_view::npos || hash == std::string_view::npos || hash < dot) return false;
  auto b = std::from_chars(text.data() + dot + 1, text.data() + hash, burst);
  auto n = std::from_chars(text.data() + hash + 2, text.data() + text.size(), i);
  return b.ec == std::errc() && n.ec == std::errc();
}

}  // namespace

load_driver::load_driver(boost::asio::io_context& io, run_state& run, int index, int channels)
    : run_(run),
      index_(index),
      socket_(std::make_shared<load_socket>(io)),
      channels_(static_cast<std::size_t>(channels)),
      text_(static_cast<std::size_t>(run.opts.text_bytes), 'x'),
      pacer_(io) {}

std::string load_driver::request_id(std::uint64_t n) const {
  return "L" + std::to_string(index_) + "-" + std::to_string(n);
}

void load_driver::send_frame(std::string frame) {
  ++totals_.frames_sent;
  socket_->send(std::move(frame));
}

std::uint64_t load_driver::send_request(op_kind kind, int channel, std::string_view type, std::string_view channel_id,
                                        std::string_view payload, std::uint64_t reserved) {
  const std::uint64_t n = ++next_request_;
  const std::string id = request_id(n);
  std::string frame;
  frame.reserve(160 + payload.size());
  frame += R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_)";
  frame += id;
  frame += R"(","request_id":")";
  frame += id;
  frame += R"(","type":")";
  frame += type;
  frame += R"(","time":)";
  frame += std::to_string(unix_ms());
  if (!channel_id.empty()) {
    frame += R"(,"connector_channel_id":")";
    frame += channel_id;
    frame += '"';
  }
  frame += R"(,"payload":)";
  frame += payload;
  frame += '}';
  pending_.emplace(n, pending_op{kind, channel, clock::now(), reserved});
  send_frame(std::move(frame));
  return n;
}

// ---- set-up ----

void load_driver::set_up(const upgrade_request& request, std::function<void(std::string)> done) {
  set_up_done_ = std::move(done);
  socket_->on_frame = [this](std::string_view frame) { on_frame(frame); };
  // Weak: the socket is the driver's, so a strong reference back would keep both alive for ever.
  socket_->on_closed = [weak = weak_from_this()](boost::system::error_code ec) {
    auto self = weak.lock();
    if (!self || self->finished_) return;
    ++self->totals_.errors;
    ++self->totals_.error_codes["socket_closed: " + ec.message()];
    self->run_.errors.fetch_add(1, std::memory_order_relaxed);
    self->end_set_up("the socket closed: " + ec.message());
  };
  socket_->start(request, [self = shared_from_this()](boost::system::error_code ec) {
    if (ec) return self->end_set_up("cannot connect and upgrade: " + ec.message());
    if (self->run_.opts.target == target_kind::ceiling) {
      for (std::size_t c = 0; c < self->channels_.size(); ++c)
        self->channels_[c].id = ceiling_channel_id(self->index_, static_cast<int>(c));
      return std::exchange(self->set_up_done_, nullptr)("");
    }
    self->send_request(op_kind::hello, -1, "connector.hello", "",
                       R"({"connector_card_id":)" + json_string(self->run_.card_id) +
                           R"(,"connector_id":"","protocol_version":"3.0",)"
                           R"("supported_profiles":["xagent.im.v1","xagent.im.v2"]})");
  });
}

// why is "" when every channel is ready.
void load_driver::end_set_up(const std::string& why) {
  if (auto done = std::exchange(set_up_done_, nullptr)) done(why);
}

void load_driver::set_up_next_channel() {
  while (channels_opening_ < channels_.size() && channels_opening_ - channels_ready_ < set_up_concurrency)
    send_request(op_kind::open, static_cast<int>(channels_opening_++), "channel.open", "", "{}");
}

// ---- frames in ----

void load_driver::on_frame(std::string_view frame) {
  ++totals_.frames_received;
  packet_error error;
  auto packet = decoder_.decode(frame, error);
  if (!packet) {
    ++totals_.errors;
    ++totals_.error_codes["undecodable frame"];
    run_.errors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (packet->request_id) {
    auto dash = packet->request_id->rfind('-');
    std::uint64_t n = 0;
    if (dash != std::string_view::npos &&
        std::from_chars(packet->request_id->data() + dash + 1, packet->request_id->data() + packet->request_id->size(), n)
                .ec == std::errc()) {
      if (auto it = pending_.find(n); it != pending_.end()) {
        pending_op op = it->second;
        pending_.erase(it);
        return on_answer(op, *packet);
      }
    }
  }
  if (packet->type == "chat.message") return on_chat_message(*packet);
  if (packet->error_code) {  // an error no operation waits for (a delta refused, say)
    ++totals_.errors;
    ++totals_.error_codes[std::string(*packet->error_code)];
    run_.errors.fetch_add(1, std::memory_order_relaxed);
  }
}

void load_driver::on_answer(const pending_op& op, const packet_view& answer) {
  std::string_view code = answer.error_code.value_or("");
  payload_fields fields;
  if (answer.payload) payload_reader_.read(*answer.payload, fields);
  switch (op.kind) {
    case op_kind::hello:
      if (answer.type != "connector.hello.ack") return end_set_up("hello refused: " + std::string(code));
      return set_up_next_channel();
    case op_kind::open: {
      if (answer.type != "channel.open.ack" || !answer.connector_channel_id)
        return end_set_up("channel.open refused: " + std::string(code));
      auto& ch = channels_[static_cast<std::size_t>(op.channel)];
      ch.id = std::string(*answer.connector_channel_id);
      channel_index_.emplace(ch.id, op.channel);
      send_request(op_kind::auth, op.channel, "auth.start", ch.id,
                   R"({"flow_id":"echo_token","input":{"token":)" + json_string(load_token) + "}}");
      return;
    }
    case op_kind::auth:
      if (fields.status != "authenticated") return end_set_up("auth.start refused: " + std::string(code));
      if (++channels_ready_ == channels_.size()) return end_set_up("");
      return set_up_next_channel();
    case op_kind::final_message:
      if (code.empty() && fields.status != "accepted") code = fields.code.empty() ? "not_accepted" : fields.code;
      break;
    case op_kind::burst: {
      auto& ch = channels_[static_cast<std::size_t>(op.channel)];
      if (!code.empty()) {  // none of its messages will come
        ++totals_.error_codes[std::string(code)];
        totals_.errors += op.reserved;
        run_.errors.fetch_add(op.reserved, std::memory_order_relaxed);
        ch.burst_received = ch.burst_size;
      }
      ch.burst_answered = true;
      return maybe_end_burst(op.channel);
    }
    case op_kind::send_message: {
      // Done once the far side's reply (a chat.message) has arrived too, whichever comes first.
      auto& ch = channels_[static_cast<std::size_t>(op.channel)];
      if (!code.empty() || ch.early_replies == 0) {
        if (code.empty()) return ch.awaiting_reply.push_back(op.sent);
        break;
      }
      --ch.early_replies;
      break;
    }
    case op_kind::invoke: break;
  }
  if (code.empty()) totals_.latency.add(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - op.sent).count()));
  end_operation(code);
  next_operation(op.channel);
}

void load_driver::on_chat_message(const packet_view& push) {
  payload_fields fields;
  if (!push.payload || !payload_reader_.read(*push.payload, fields) || fields.message_id.empty()) {
    ++totals_.errors;
    ++totals_.error_codes["chat.message without message_id"];
    return;
  }
  const std::string channel_id(push.connector_channel_id.value_or(""));
  send_frame(R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_ack)" + std::to_string(++next_message_) +
             R"(","type":"chat.message.ack","time":)" + std::to_string(unix_ms()) +
             R"(,"connector_channel_id":")" + channel_id + R"(","payload":{"message_id":)" +
             json_string(fields.message_id) + R"(,"status":"accepted"}})");
  ++totals_.inbound_acked;
  auto it = channel_index_.find(channel_id);
  if (run_.opts.what == scenario::mixed && it != channel_index_.end()) {
    auto& ch = channels_[static_cast<std::size_t>(it->second)];
    if (ch.awaiting_reply.empty()) {
      ++ch.early_replies;
      return;
    }
    totals_.latency.add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - ch.awaiting_reply.front()).count()));
    ch.awaiting_reply.pop_front();
    end_operation("");
    return next_operation(it->second);
  }
  if (run_.opts.what != scenario::inbound) return;

  std::uint64_t burst = 0, i = 0;
  if (it == channel_index_.end() || !parse_burst_text(fields.text, burst, i)) {
    ++totals_.errors;
    ++totals_.error_codes["unexpected chat.message"];
    return;
  }
  auto& ch = channels_[static_cast<std::size_t>(it->second)];
  if (burst != ch.burst_no || i == 0 || i > ch.burst_size || ch.burst_seen[i - 1]) {
    ++totals_.duplicates;
    return;
  }
  ch.burst_seen[i - 1] = true;
  ++ch.burst_received;
  ++totals_.operations;
  run_.completed.fetch_add(1, std::memory_order_relaxed);
  totals_.latency.add(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - ch.burst_sent).count()));
  maybe_end_burst(it->second);
}

// ---- operations ----

void load_driver::start() {
  if (moves_files(run_.opts.what)) return;  // the socket only holds its channels signed in
  if (run_.opts.rate > 0) {
    // Sockets start out of phase, a fraction of the interval apart, so that their sends interleave instead of
    // arriving all at once (which would measure a burst, not the rate).
    const double interval_s = run_.opts.sockets / run_.opts.rate;
    paced_since_ = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(
                                      interval_s * index_ / run_.opts.sockets));
    return pace();
  }
  // An inbound channel runs one burst at a time: the server's delivery window paces it, not the client.
  const int slots = run_.opts.what == scenario::inbound ? 1 : run_.opts.inflight;
  for (int c = 0; c < static_cast<int>(channels_.size()); ++c)
    for (int k = 0; k < slots; ++k) next_operation(c);
}

// The socket's share of --rate, spread over its channels in turn: sends what is due, then sleeps until the next
// one is (no idle ticks: with many sockets on one client thread, those would cost more than the sends). Latency
// counts from the actual send.
void load_driver::pace() {
  if (finished_) return;
  const double per_socket = run_.opts.rate / run_.opts.sockets;
  const auto now = clock::now();
  const auto due = now < paced_since_ ? 0
                                      : static_cast<std::uint64_t>(
                                            std::chrono::duration<double>(now - paced_since_).count() * per_socket) +
                                            1;
  while (paced_sent_ < due && !finished_) send_operation(static_cast<int>(paced_sent_++ % channels_.size()));
  pacer_.expires_at(paced_since_ + std::chrono::duration_cast<clock::duration>(
                                       std::chrono::duration<double>(paced_sent_ / per_socket)));
  pacer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->pace();
  });
}

void load_driver::next_operation(int channel) {
  if (run_.opts.rate > 0) return;
  send_operation(channel);
}

void load_driver::send_operation(int channel) {
  if (finished_) return;
  const auto& o = run_.opts;
  if (o.what == scenario::inbound) {
    if (auto n = run_.reserve(static_cast<std::uint64_t>(o.burst))) send_burst(channel, n);
    return;
  }
  if (o.what == scenario::idle || !run_.reserve(1)) return;
  const std::string text_arguments = R"({"text":)" + json_string(text_) + "}";
  scenario step = o.what;
  if (step == scenario::mixed) {
    const int k = channels_[static_cast<std::size_t>(channel)].mixed_step++ % 3;
    if (k == 2) return send_invoke(channel, op_kind::send_message, "echo_send_message", text_arguments);
    step = k == 0 ? scenario::invoke : scenario::outbound;
  }
  if (step == scenario::outbound) return send_outbound(channel);
  send_invoke(channel, op_kind::invoke, "echo_reverse", text_arguments);
}

void load_driver::send_invoke(int channel, op_kind kind, std::string_view tool, const std::string& arguments) {
  run_.in_flight.fetch_add(1, std::memory_order_relaxed);
  // tool_call_id is the idempotency key of a tool with a side effect: every call is a new one.
  const std::string call_id = "call" + std::to_string(index_) + "-" + std::to_string(next_request_ + 1);
  send_request(kind, channel, "tool.invoke", channels_[static_cast<std::size_t>(channel)].id,
               R"({"tool_id":)" + json_string(tool) + R"(,"arguments":)" + arguments +
                   R"(,"context":{"session_id":"load","tool_call_id":)" + json_string(call_id) + "}}");
}

// Deltas, then the final that answers: one outbound message.
void load_driver::send_outbound(int channel) {
  run_.in_flight.fetch_add(1, std::memory_order_relaxed);
  const std::string& channel_id = channels_[static_cast<std::size_t>(channel)].id;
  const std::string message_id = json_string("m" + std::to_string(index_) + "-" + std::to_string(++next_message_));
  for (int seq = 1; seq <= run_.opts.deltas; ++seq)
    send_frame(R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_d)" + std::to_string(++next_message_) +
               R"(","type":"chat.message.delta","time":)" + std::to_string(unix_ms()) +
               R"(,"connector_channel_id":")" + channel_id + R"(","payload":{"message_id":)" + message_id +
               R"(,"sequence":)" + std::to_string(seq) + R"(,"text":)" + json_string(text_) + "}}");
  send_request(op_kind::final_message, channel, "chat.message", channel_id,
               R"({"message_id":)" + message_id + R"(,"text":)" + json_string(text_) + "}");
}

void load_driver::send_burst(int channel, std::uint64_t count) {
  run_.in_flight.fetch_add(1, std::memory_order_relaxed);
  auto& ch = channels_[static_cast<std::size_t>(channel)];
  ++ch.burst_no;
  ch.burst_size = count;
  ch.burst_received = 0;
  ch.burst_answered = false;
  ch.burst_seen.assign(count, false);
  ch.burst_sent = clock::now();
  const std::string text = std::to_string(channel) + "." + std::to_string(ch.burst_no);
  send_request(op_kind::burst, channel, "tool.invoke", ch.id,
               R"({"tool_id":"echo_burst","arguments":{"count":)" + std::to_string(count) + R"(,"text":)" +
                   json_string(text) + R"(},"context":{"session_id":"load","tool_call_id":"burst)" +
                   std::to_string(index_) + "-" + std::to_string(channel) + "-" + std::to_string(ch.burst_no) +
                   R"("}})",
               count);
}

void load_driver::maybe_end_burst(int channel) {
  auto& ch = channels_[static_cast<std::size_t>(channel)];
  if (!ch.burst_answered || ch.burst_received < ch.burst_size) return;
  ch.burst_answered = false;  // ends once
  run_.in_flight.fetch_sub(1, std::memory_order_relaxed);
  next_operation(channel);
}

void load_driver::end_operation(std::string_view error_code) {
  run_.in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (error_code.empty()) {
    ++totals_.operations;
    run_.completed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ++totals_.errors;
  ++totals_.error_codes[std::string(error_code)];
  run_.errors.fetch_add(1, std::memory_order_relaxed);
}

void load_driver::finish() {
  if (finished_) return;
  finished_ = true;
  pacer_.cancel();
  for (const auto& [n, op] : pending_)
    if (op.kind != op_kind::hello && op.kind != op_kind::open && op.kind != op_kind::auth)
      totals_.unanswered += op.reserved;
  for (const auto& ch : channels_) {  // messages of a burst answered but not all delivered; replies not come
    if (ch.burst_answered && ch.burst_received < ch.burst_size) totals_.unanswered += ch.burst_size - ch.burst_received;
    totals_.unanswered += ch.awaiting_reply.size();
  }
  socket_->close();
}

}  // namespace xconn::load
