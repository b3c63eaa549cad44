// Every data-plane packet a client may send, in one table (spec §6, IM v2 §10): what it needs before its
// handler runs, and the handler. Anything else is unsupported_packet.
#include "core/dataplane/ws_session.hpp"
#include "core/events/event_log.hpp"
#include "core/wire/packet_payload.hpp"

#include <algorithm>

namespace xconn {
namespace json = boost::json;

// What a packet needs before its handler runs.
enum class packet_needs {
  any_time,          // answered at any time, even before the hello
  after_hello,       // a completed connector.hello on this socket
  on_channel,        // and connector_channel_id naming a channel this socket opened
  on_im_v2_channel,  // and the xagent.im.v2 profile negotiated (else dropped unanswered, IM v2 §10)
};

struct ws_session::packet_handler {
  std::string_view type;
  packet_needs needs;
  bool reads_payload;
  packet_fn handle;
};

const ws_session::packet_handler* ws_session::handler_for(std::string_view type) {
  using enum packet_needs;
  static constexpr packet_handler handlers[] = {
      {"ping", any_time, false, &ws_session::on_ping},
      // A pong the server never pinged for (a peer's own keepalive) is taken as a sign of life, never answered.
      {"pong", any_time, false, &ws_session::on_pong},
      {"error", any_time, false, &ws_session::on_error},  // logged, never answered (spec §8.23): no error loops
      {"connector.hello", any_time, false, &ws_session::on_hello},
      {"channel.open", after_hello, false, &ws_session::on_channel_open},
      {"channel.close", on_channel, false, &ws_session::on_channel_close},
      {"connection.descriptor.get", on_channel, false, &ws_session::on_descriptor_get},
      {"auth.start", on_channel, true, &ws_session::on_auth_start},
      {"auth.status", on_channel, true, &ws_session::on_auth_status},
      {"auth.cancel", on_channel, true, &ws_session::on_auth_cancel},
      {"auth.logout", on_channel, false, &ws_session::on_auth_logout},
      {"tool.invoke", on_channel, true, &ws_session::on_tool_invoke},
      {"chat.message", on_im_v2_channel, true, &ws_session::on_chat_message},
      {"chat.message.delta", on_im_v2_channel, true, &ws_session::on_chat_delta},
      {"chat.message.ack", on_im_v2_channel, true, &ws_session::on_chat_ack},
      {"chat.activity", on_im_v2_channel, true, &ws_session::on_chat_activity},
  };
  for (const auto& h : handlers)
    if (h.type == type) return &h;
  return nullptr;
}

bool ws_session::im_v2_negotiated() const {
  return std::find(profiles_.begin(), profiles_.end(), "xagent.im.v2") != profiles_.end();
}

void ws_session::dispatch(const packet_view& p) {
  using enum packet_needs;
  correlation_scope cause(p.packet_id);  // what the packet changes at once is recorded as its doing (/events)
  const auto* h = handler_for(p.type);
  if (!h || h->needs != any_time) {
    if (!hello_done_) return send_error(&p, "hello_required", "connector.hello must complete first");
    if (!h) return send_error(&p, "unsupported_packet", "this connector does not support that packet type");
  }
  if (h->needs == on_im_v2_channel && !im_v2_negotiated()) {
    ++ctx_.profile_dropped;
    return;
  }
  channel c;
  if ((h->needs == on_channel || h->needs == on_im_v2_channel) && !check_route(p, c)) return;
  json::object payload;
  if (h->reads_payload) {
    auto read = payload_of(p);
    if (!read) return send_error(&p, "invalid_packet", "payload holds a number out of range");
    payload = std::move(*read);
  }
  (this->*h->handle)(p, c, payload);
}

}  // namespace xconn
