#include "core/dataplane/ws_session.hpp"

#include "core/channels/lease_service.hpp"

#include "core/plugin_host/connector_card.hpp"
#include "core/wire/hello.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

namespace xconn {
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace json = boost::json;

struct ws_session::connection {
  explicit connection(boost::asio::ip::tcp::socket&& socket) : ws(std::move(socket)) {}
  websocket::stream<beast::tcp_stream, false> ws;  // false: no permessage-deflate code (never offered)
  beast::flat_buffer buffer;
};

ws_session::ws_session(boost::asio::ip::tcp::socket&& socket, connection_slots::slot slot, server_context& ctx,
                       std::shared_ptr<connector> conn)
    : io_(std::make_unique<connection>(std::move(socket))), slot_(std::move(slot)), ctx_(ctx), connector_(std::move(conn)),
      budget_(ctx.cfg.server.max_outbox_bytes,
              [strand = io_->ws.get_executor()](std::function<void()> fn) { boost::asio::post(strand, std::move(fn)); }),
      heartbeat_(io_->ws.get_executor()) {}

ws_session::~ws_session() {
  ctx_.sessions.remove(this);
  if (hello_done_) ctx_.leases.socket_closed(connector_id_);
  budget_.forget_waiters();  // their channels get a new route; nothing is posted to a strand that is going
  drop_outbox();
}

void ws_session::push(std::string packet, std::function<void(bool written)> written) {
  budget_.add(packet.size());
  boost::asio::post(io_->ws.get_executor(),
                    [self = shared_from_this(), packet = std::move(packet), written = std::move(written)]() mutable {
                      self->send_counted(std::move(packet), std::move(written));
                    });
}

bool ws_session::push_within_budget(std::string& packet, std::function<void(bool written)> written) {
  if (!budget_.try_add(packet.size())) return false;
  boost::asio::post(io_->ws.get_executor(),
                    [self = shared_from_this(), packet = std::move(packet), written = std::move(written)]() mutable {
                      self->send_counted(std::move(packet), std::move(written));
                    });
  return true;
}

void ws_session::drop_outbox() {
  auto frames = std::move(outbox_);
  outbox_.clear();
  outbox_bytes_ = 0;
  for (auto& f : frames) {
    budget_.remove(f.text.size());
    if (f.written) f.written(false);
  }
}

void ws_session::run(http_request req, bool select_subprotocol) {
  io_->ws.set_option(websocket::stream_base::timeout{std::chrono::seconds(30), websocket::stream_base::none(), false});
  io_->ws.set_option(websocket::stream_base::decorator([select_subprotocol](websocket::response_type& res) {
    res.set(beast::http::field::server, "xconn");
    if (select_subprotocol) res.set(beast::http::field::sec_websocket_protocol, data_plane_subprotocol);
  }));
  io_->ws.read_message_max(ctx_.cfg.server.max_frame_bytes);
  io_->ws.text(true);
  io_->ws.async_accept(req, beast::bind_front_handler(&ws_session::on_accept, shared_from_this()));
}

void ws_session::on_accept(beast::error_code ec) {
  if (ec) return;
  ctx_.sessions.add(shared_from_this());
  if (ctx_.stopping) {
    close_after_send(websocket::close_code::going_away);
    return;
  }
  last_heard_ = accepted_at_ = clock::now();
  io_->ws.control_callback([this](websocket::frame_type, beast::string_view) { last_heard_ = clock::now(); });
  start_heartbeat();
  do_read();
}

void ws_session::shut_down() {
  boost::asio::dispatch(io_->ws.get_executor(), [self = shared_from_this()] {
    self->close_after_send(websocket::close_code::going_away);
  });
}

void ws_session::abort() {
  boost::asio::dispatch(io_->ws.get_executor(), [self = shared_from_this()] {
    self->closing_ = true;
    self->heartbeat_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(self->io_->ws).socket().close(ignored);
  });
}

void ws_session::do_read() {
  if (closing_ || close_code_) return;
  io_->ws.async_read(io_->buffer, beast::bind_front_handler(&ws_session::on_read, shared_from_this()));
}

void ws_session::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    if (ec == websocket::error::message_too_big)
      spdlog::warn("[plugin {}] data plane: frame over {} bytes, closed with 1009", connector_->id(),
                   ctx_.cfg.server.max_frame_bytes);
    heartbeat_.cancel();
    return;
  }
  last_heard_ = clock::now();
  auto data = io_->buffer.cdata();
  std::string_view frame(static_cast<const char*>(data.data()), data.size());
  bool binary = io_->ws.got_binary();
  bool keep_reading = true;
  if (binary) {
    send_error(nullptr, "invalid_packet", "packets are text frames");
  } else {
    keep_reading = handle_frame(frame);
  }
  io_->buffer.consume(io_->buffer.size());
  if (!keep_reading) return;
  // A peer that asks faster than it reads waits in its own socket, not in our memory: at max_in_flight calls, or
  // with half the outbox budget unwritten, reading pauses until answers are written.
  if (in_flight_ >= max_in_flight || outbox_bytes_ > ctx_.cfg.server.max_outbox_bytes / 2) {
    read_paused_ = true;
    return;
  }
  do_read();
}

// The peer left more than the budget unread and read nothing for a heartbeat: what waits for it is dropped (pushed
// messages stay unacked and come again on another socket) and the socket closes with 1008 once the frame on the
// wire is through; a peer that never reads again is dropped at the heartbeat's silence limit.
void ws_session::drop_unread() {
  spdlog::warn("[plugin {}] data plane: the peer left {} bytes unread past server.max_outbox_bytes {} and read "
               "nothing for {} s, closed with 1008",
               connector_->id(), outbox_bytes_, ctx_.cfg.server.max_outbox_bytes, ctx_.cfg.server.heartbeat_s);
  close_code_ = websocket::close_code::policy_error;  // first: nothing the callbacks below do reads or sends
  std::deque<outgoing_frame> on_the_wire;
  if (writing_ && !outbox_.empty()) {
    on_the_wire.push_back(std::move(outbox_.front()));
    outbox_.pop_front();
  }
  drop_outbox();
  outbox_ = std::move(on_the_wire);
  for (const auto& f : outbox_) outbox_bytes_ += f.text.size();  // still counted in budget_
  if (!writing_) do_close();
  start_heartbeat();  // the silence limit still applies
}

void ws_session::resume_reading_if_room() {
  if (!read_paused_ || in_flight_ >= max_in_flight || outbox_bytes_ > ctx_.cfg.server.max_outbox_bytes / 4) return;
  read_paused_ = false;
  do_read();
}

bool ws_session::handle_frame(std::string_view frame) {
  packet_error perr;
  auto p = decoder_.decode(frame, perr);
  if (!p) {
    outgoing_packet out;
    out.type = "error";
    if (perr.request_id) out.request_id = *perr.request_id;
    if (perr.packet_id) out.reply_to = *perr.packet_id;
    out.error_code = "invalid_packet";
    out.error_message = perr.message;
    send(encode_packet(out));
    return true;
  }
  dispatch(*p);
  return !std::exchange(hold_reading_, false);
}

void ws_session::on_ping(const packet_view& p, const channel&, const json::object&) {
  auto pong = reply_to(p, "pong");
  pong.connector_channel_id.clear();
  send(encode_packet(pong));
}

void ws_session::on_pong(const packet_view&, const channel&, const json::object&) {
  // Nothing to answer: the frame already counted as heard (on_read), and an answer could start a pong loop.
}

void ws_session::on_error(const packet_view& p, const channel&, const json::object&) {
  // The code and what it answers; the peer's message text is its own and may quote anything.
  spdlog::warn("[plugin {}] xAgent reported error {} (reply_to {}, channel {})", connector_->id(),
               p.error_code.value_or(std::string_view("(none)")).substr(0, 64),
               p.reply_to.value_or(std::string_view("-")).substr(0, 64),
               p.connector_channel_id.value_or(std::string_view("-")).substr(0, 64));
}

void ws_session::on_hello(const packet_view& p, const channel&, const json::object&) {
  if (hello_done_) return send_error(&p, "invalid_packet", "connector.hello was already completed on this socket");
  hold_reading_ = true;  // reading resumes once the hello is answered
  handle_hello(p);
}

void ws_session::handle_hello(const packet_view& p) {
  auto manifest = connector_->manifest();
  const auto& m = *manifest;
  std::vector<std::string> card_profiles;
  for (const auto& v : m.card.at("supports").as_object().at("profiles").as_array())
    card_profiles.emplace_back(v.as_string());
  auto outcome = negotiate_hello(p.payload.value_or(std::string_view()), m.card_id, card_profiles);
  if (!outcome.error_code.empty()) {
    spdlog::info("[plugin {}] hello refused: {}", connector_->id(), outcome.error_code);
    send_error(&p, outcome.error_code, outcome.error_message);
    close_after_send(websocket::close_code::policy_error);
    return;
  }
  // The ids outlive the decoder's buffers: copy what the answer needs.
  auto ack = reply_to(p, "connector.hello.ack");
  ack.connector_channel_id.clear();
  ctx_.ids.resolve(m.card_id, outcome.requested_connector_id,
                   [self = shared_from_this(), ack = std::move(ack), profiles = std::move(outcome.profiles)](
                       std::string connector_id, std::error_code ec) mutable {
                     auto strand = self->io_->ws.get_executor();
                     boost::asio::post(strand, [self, ack = std::move(ack), profiles = std::move(profiles),
                                                connector_id = std::move(connector_id), ec]() mutable {
                       if (ec) {
                         // Only a new connector_id needs a write: a known one resumes even on a full disk.
                         spdlog::error("[plugin {}] cannot record a new connector_id: {}", self->connector_->id(),
                                       ec.message());
                         ack.type = "error";
                         ack.error_code = "store_failed";
                         ack.error_message = "the connector cannot record a new connector_id now; try again later";
                         self->send(encode_packet(ack));
                         self->close_after_send(websocket::close_code::try_again_later);
                         return;
                       }
                       self->hello_done_ = true;
                       self->connector_->metrics()->hellos.fetch_add(1, std::memory_order_relaxed);
                       self->connector_id_ = connector_id;
                       self->ctx_.leases.hello(connector_id);
                       self->profiles_ = std::move(profiles);
                       auto card_id = self->connector_->manifest()->card_id;
                       ack.payload = json::object{{"connector_card_id", card_id},
                                                  {"connector_id", connector_id},
                                                  {"protocol_version", protocol_version}};
                       self->send(encode_packet(ack));
                       self->do_read();
                     });
                   });
}

void ws_session::send_error(const packet_view* request, std::string_view code, std::string_view message) {
  outgoing_packet out = request ? reply_to(*request, "error") : outgoing_packet{};
  out.type = "error";
  out.error_code = code;
  out.error_message = message;
  send(encode_packet(out));
}

void ws_session::deliver(std::string text) {
  budget_.add(text.size());
  boost::asio::post(io_->ws.get_executor(), [self = shared_from_this(), text = std::move(text)]() mutable {
    self->send_counted(std::move(text), {});
  });
}

boost::asio::any_io_executor ws_session::strand() const { return io_->ws.get_executor(); }

void ws_session::deliver_answer(std::string text) {
  budget_.add(text.size());
  boost::asio::post(io_->ws.get_executor(), [self = shared_from_this(), text = std::move(text)]() mutable {
    // The call stays in flight until its answer is written (or the socket went): an answer queued behind a peer
    // that does not read still counts.
    self->send_counted(std::move(text), [weak = std::weak_ptr<ws_session>(self)](bool) {
      if (auto s = weak.lock()) {
        --s->in_flight_;
        s->resume_reading_if_room();
      }
    });
  });
}

void ws_session::send(std::string text, std::function<void(bool)> written) {
  budget_.add(text.size());
  send_counted(std::move(text), std::move(written));
}

void ws_session::send_counted(std::string text, std::function<void(bool)> written) {
  if (closing_ || close_code_) {
    budget_.remove(text.size());
    if (written) written(false);
    return;
  }
  if (outbox_.empty()) last_write_progress_ = clock::now();  // waiting starts now, not at the last write
  outbox_bytes_ += text.size();
  outbox_.push_back({std::move(text), std::move(written)});
  if (!writing_) do_write();
}

void ws_session::close_after_send(websocket::close_code code) {
  if (closing_ || close_code_) return;
  close_code_ = code;
  if (!writing_) do_close();
}

void ws_session::do_write() {
  if (outbox_.empty()) {
    writing_ = false;
    if (close_code_) do_close();
    return;
  }
  writing_ = true;
  io_->ws.async_write(boost::asio::buffer(outbox_.front().text),
                  beast::bind_front_handler(&ws_session::on_write, shared_from_this()));
}

void ws_session::on_write(beast::error_code ec, std::size_t) {
  auto frame = std::move(outbox_.front());
  outbox_.pop_front();
  outbox_bytes_ -= frame.text.size();
  budget_.remove(frame.text.size());
  last_write_progress_ = clock::now();
  if (frame.written) frame.written(!ec);
  if (ec) {
    writing_ = false;
    drop_outbox();
    return;
  }
  resume_reading_if_room();
  do_write();
}

void ws_session::do_close() {
  if (closing_) return;
  closing_ = true;
  heartbeat_.cancel();
  io_->ws.async_close(websocket::close_reason(*close_code_), [self = shared_from_this()](beast::error_code) {
    beast::error_code ignored;
    beast::get_lowest_layer(self->io_->ws).socket().close(ignored);
  });
}

void ws_session::start_heartbeat() {
  // The next beat comes at the heartbeat period, or sooner when the hello deadline falls first.
  auto period = std::chrono::seconds(ctx_.cfg.server.heartbeat_s);
  if (!hello_done_) {
    auto hello_left = accepted_at_ + std::chrono::seconds(ctx_.cfg.server.hello_timeout_s) - clock::now();
    if (hello_left < period)
      period = std::chrono::duration_cast<std::chrono::seconds>(hello_left) + std::chrono::seconds(1);
  }
  heartbeat_.expires_after(period);
  heartbeat_.async_wait(beast::bind_front_handler(&ws_session::on_heartbeat, shared_from_this()));
}

void ws_session::on_heartbeat(beast::error_code ec) {
  if (ec || closing_) return;
  if (outbox_bytes_ > ctx_.cfg.server.max_outbox_bytes &&
      clock::now() - last_write_progress_ >= std::chrono::seconds(ctx_.cfg.server.heartbeat_s))
    return drop_unread();
  if (!hello_done_ && clock::now() - accepted_at_ >= std::chrono::seconds(ctx_.cfg.server.hello_timeout_s)) {
    spdlog::info("[plugin {}] data plane without connector.hello for {} s, closed with 1008", connector_->id(),
                 ctx_.cfg.server.hello_timeout_s);
    close_after_send(websocket::close_code::policy_error);
    return;
  }
  auto period = std::chrono::seconds(ctx_.cfg.server.heartbeat_s);
  if (clock::now() - last_heard_ >= 3 * period) {
    spdlog::info("[plugin {}] data plane silent for {} s, dropped", connector_->id(), 3 * period.count());
    closing_ = true;
    beast::error_code ignored;
    beast::get_lowest_layer(io_->ws).socket().close(ignored);
    return;
  }
  if (!ping_in_flight_) {
    ping_in_flight_ = true;
    io_->ws.async_ping({}, [self = shared_from_this()](beast::error_code) { self->ping_in_flight_ = false; });
  }
  start_heartbeat();
}

}  // namespace xconn
