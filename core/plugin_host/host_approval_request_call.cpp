// The plugin's xconn_host_approval_request (plugin.h, since 1.6): the canonical approval_request has a carrier in the
// plugin API, but no Protocol 3.0 packet takes it to xAgent, so every request is refused as "unsupported" until a
// profile defines one; the refusal shows on /events. The request itself is neither kept nor logged.
#include "core/plugin_host/plugin_generation.hpp"

#include <spdlog/spdlog.h>

namespace xconn {

namespace {
constexpr std::string_view refusal_code = "unsupported";
constexpr std::string_view refusal_message =
    "no xAgent Connector Protocol 3.0 packet carries an approval request; none is sent until a profile defines one";
}  // namespace

void plugin_generation::on_host_approval_request(void* ctx, xconn_str channel_id, xconn_str, xconn_emit_done done,
                                                 void* user) {
  auto* self = static_cast<plugin_generation*>(ctx);
  self->touch();
  std::string_view channel(channel_id.data ? channel_id.data : "", channel_id.data ? channel_id.size : 0);
  if (auto owner = self->owner(); owner && self->hooks_.refused)
    self->hooks_.refused(*owner, channel, "approval_request", refusal_code);
  spdlog::debug("[plugin {}] approval request refused: {}", self->id(), refusal_code);  // /events shows each
  if (!done) return;
  xconn_emit_result r{sizeof(xconn_emit_result), XCONN_STATUS_ERROR, {"", 0}, 0,
                      {refusal_code.data(), refusal_code.size()}, {refusal_message.data(), refusal_message.size()}};
  done(user, &r);
}

}  // namespace xconn
