// The user-level packets of the data plane (spec §8.3-8.19, docs/protocol.md "Data plane", "Channels"; decisions in
// docs/protocol.md): channels, auth flows, descriptors and tool invocation.
#include "core/dataplane/ws_session.hpp"

#include "core/dataplane/call_answers.hpp"
#include "core/channels/auth_flow.hpp"
#include "core/channels/channel_service.hpp"
#include "core/channels/descriptor.hpp"
#include "core/messaging/inbound_service.hpp"
#include "core/channels/lease_service.hpp"
#include "core/events/event_log.hpp"
#include "core/base/log.hpp"
#include "core/wire/packet_payload.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

namespace xconn {
namespace json = boost::json;

namespace {

std::string auth_status_of(const channel& c) { return c.authenticated ? "authenticated" : "unauthenticated"; }

}  // namespace

bool ws_session::check_route(const packet_view& p, channel& c) {
  auto route = ctx_.channels.check(p.connector_channel_id.value_or(""), connector_->id(), this, &c);
  if (route == route_check::ok) return true;
  static constexpr const char* messages[] = {"", "connector_channel_id is required for this packet",
                                             "no such channel", "the channel belongs to another connector",
                                             "channel.open must complete on this socket first"};
  send_error(&p, error_code_for(route), messages[static_cast<int>(route)]);
  return false;
}

connector::strand ws_session::auth_call_on(const std::string& channel_id) {
  ++in_flight_;  // answered through deliver_answer
  return ctx_.channels.strand_for(*connector_, channel_id);
}

std::chrono::milliseconds ws_session::auth_timeout() const { return std::chrono::seconds(ctx_.cfg.tools.timeout_s); }

void ws_session::on_channel_open(const packet_view& p, const channel&, const json::object&) {
  auto [c, created, cap_reached] =
      ctx_.channels.open(*connector_, p.connector_channel_id.value_or(""), shared_from_this());
  if (!cap_reached.empty()) {
    spdlog::debug("[plugin {}] channel.open refused: {} reached", connector_->id(), cap_reached);
    return send_error(&p, "capacity_exceeded",
                      "too many channels not yet signed in (" + std::string(cap_reached) +
                          "); sign one in, or wait for unused ones to expire");
  }
  if (created) spdlog::debug("[plugin {}] channel {} created", connector_->id(), c.id);
  auto d = ctx_.channels.descriptor(*connector_, c, profiles_);
  if (!d) return send_error(&p, "internal_error", "the connector could not describe the channel");
  auto ack = reply_to(p, "channel.open.ack");
  ack.connector_channel_id = c.id;
  ack.payload = json::object{{"connector_channel_id", c.id}, {"connection_descriptor", std::move(*d)}};
  send(encode_packet(ack));
  ctx_.inbound.wake(c.id);  // messages that waited for a route go now, after the ack
}

void ws_session::on_channel_close(const packet_view& p, const channel& c, const json::object&) {
  ctx_.channels.close(c.id, this);
  auto ack = reply_to(p, "channel.close.ack");
  ack.payload = json::object{{"status", "ok"}};
  send(encode_packet(ack));
}

void ws_session::on_descriptor_get(const packet_view& p, const channel& c, const json::object&) {
  auto d = ctx_.channels.descriptor(*connector_, c, profiles_);
  if (!d) return send_error(&p, "internal_error", "the connector could not describe the channel");
  auto ack = reply_to(p, "connection.descriptor.get.ack");
  ack.payload = json::object{{"connection_descriptor", std::move(*d)}};
  send(encode_packet(ack));
}

void ws_session::on_auth_start(const packet_view& p, const channel& c, const json::object& payload) {
  auto* flow_id = string_member(payload, "flow_id");
  if (!flow_id || flow_id->empty()) return send_error(&p, "invalid_packet", "payload.flow_id must be a string");
  const json::object* input = nullptr;
  if (auto* v = payload.if_contains("input"); v && !v->is_null()) {
    if (!v->is_object()) return send_error(&p, "invalid_packet", "payload.input must be an object");
    input = &v->as_object();
  }
  auto ack = reply_to(p, "auth.start.ack");
  ack.payload = json::object{{"connector_channel_id", c.id}, {"flow_id", *flow_id}};
  auto refuse = [&](std::string code, std::string message) {
    (*ack.payload)["status"] = "failed";
    ack.error_code = std::move(code);
    ack.error_message = std::move(message);
    send(encode_packet(ack));
  };
  auto manifest = connector_->manifest();
  const auto* flow = find_auth_flow(*manifest, *flow_id);
  if (!flow) return refuse("auth_flow_not_found", "the card declares no auth flow with that id");
  std::vector<std::string> secrets;
  if (auto why = check_auth_input(*flow, input, secrets); !why.empty()) return refuse("invalid_input", why);

  auto run_id = ctx_.channels.begin_auth(c.id, *flow_id, secret_inputs_json(*flow, input));
  (*ack.payload)["auth_session_id"] = run_id;
  std::string input_json = input ? json::serialize(*input) : "{}";
  connector_->auth_start(
      c.id, std::string(*flow_id), run_id, std::move(input_json), auth_call_on(c.id), auth_timeout(),
      [self = shared_from_this(), ack = std::move(ack), run_id, secrets = std::move(secrets)](call_result r) mutable {
        self->finish_auth(std::move(ack), std::move(run_id), std::move(secrets), std::move(r), false);
      });
}

void ws_session::finish_auth(outgoing_packet ack, std::string run_id, std::vector<std::string> secrets,
                             call_result r, bool for_status, bool refreshed) {
  correlation_scope cause(run_id);  // the run's end and the sign-in it brings are the auth session's (/events)
  auto& payload = *ack.payload;
  std::string channel_id(payload.at("connector_channel_id").as_string());
  auto failed = [&](std::string code) {
    payload["status"] = "failed";
    ctx_.channels.end_auth(run_id, auth_run_state::failed, code);
    deliver_answer(encode_packet(ack));
  };
  if (!r.ok) {
    if (for_status && r.code == "auth_session_not_found" && !r.thrown) {
      ack.type = "error";
      ack.payload.reset();
      ack.error_code = r.code;
      ack.error_message = "the connector no longer knows that auth session";
      return deliver_answer(encode_packet(ack));
    }
    set_call_error(ack, r, "auth");
    if (mentions_secret(ack.error_message, secrets)) ack.error_message = "the credentials were not accepted";
    return failed(ack.error_code);
  }
  auto invalid = [&](const std::string& why) {
    spdlog::error("[plugin {}] auth answer refused: {}", connector_->id(), why);
    ack.error_code = "invalid_plugin_result";
    ack.error_message = "the connector gave an answer the host cannot pass on";
    failed(ack.error_code);
  };
  if (mentions_secret(r.json, secrets)) return invalid("it repeats a secret input");
  auto answer = parse_auth_answer(r.json, for_status);
  if (!answer) return invalid(answer.error());
  if (answer->binding)
    if (auto why = binding_violation(*answer->binding, *connector_->manifest()); !why.empty()) return invalid(why);
  if (answer->credentials) {
    // The credentials the plugin hands over are sealed, never shown: nothing that goes out may repeat one.
    std::vector<std::string> obtained;
    for (const auto& kv : *answer->credentials) obtained.emplace_back(kv.value().as_string());
    if (mentions_secret(json::serialize(answer->fields), obtained) ||
        (answer->binding && mentions_secret(json::serialize(*answer->binding), obtained)))
      return invalid("it shows a credential it hands over");
  }
  if (answer->status == "qr_refresh_required" && !refreshed) {
    // The material is stale: xAgent gets the new one in this answer instead of asking again (spec §8.9).
    std::string flow_id(payload.at("flow_id").as_string());
    return connector_->auth_status(
        // The same turn in flight as the first call: one answer goes out.
        channel_id, flow_id, run_id, true, ctx_.channels.strand_for(*connector_, channel_id), auth_timeout(),
        [self = shared_from_this(), ack = std::move(ack), run_id, secrets = std::move(secrets),
         for_status](call_result again) mutable {
          self->finish_auth(std::move(ack), std::move(run_id), std::move(secrets), std::move(again), for_status, true);
        });
  }
  for (auto& kv : answer->fields) payload[kv.key()] = std::move(kv.value());
  payload["status"] = answer->status;
  if (auto ended = run_ended_without_sign_in(answer->status)) {
    // The run is over (expired, unauthenticated): a new auth.start begins another; its record answers from now on.
    ctx_.channels.end_auth(run_id, *ended);
    return deliver_answer(encode_packet(ack));
  }
  if (answer->status == "failed") {
    ack.error_code = "auth_failed";
    ack.error_message = "the connector reports the sign-in failed";
    return failed(ack.error_code);
  }
  if (answer->status != "authenticated") return deliver_answer(encode_packet(ack));

  auto run = ctx_.channels.find_auth(channel_id, run_id);
  ctx_.channels.end_auth(run_id, auth_run_state::authenticated);
  ctx_.channels.authenticate(
      channel_id, std::move(*answer->binding),
      sealed_credentials_json(run ? run->secret_inputs : std::string(),
                              answer->credentials ? &*answer->credentials : nullptr),
      [self = shared_from_this(), ack = std::move(ack), channel_id, run_id](std::optional<channel> c,
                                                                          std::error_code ec) mutable {
        correlation_scope cause(run_id);
        if (c && ec) {
          // Not durable, so not signed in (the host undid it): a failure xAgent may retry with a new sign-in.
          (*ack.payload)["status"] = "failed";
          ack.error_code = "store_failed";
          ack.error_message = "the sign-in could not be recorded (the connector's store cannot write now); sign in again later";
          self->ctx_.channels.end_auth(run_id, auth_run_state::failed, ack.error_code);
          return self->deliver_answer(encode_packet(ack));
        }
        if (!self->deliver_with_descriptor(std::move(ack), c, ec)) return;
        // The ack answers this request; the push tells every view of the channel (spec §8.17).
        self->ctx_.channels.push_descriptor(*self->connector_, channel_id);
      });
}

bool ws_session::deliver_with_descriptor(outgoing_packet ack, const std::optional<channel>& c, std::error_code ec) {
  std::optional<json::object> d;
  if (c && !ec) d = ctx_.channels.descriptor(*connector_, *c, profiles_);
  if (!d) {
    ack.type = "error";
    ack.payload.reset();
    if (!c) {
      ack.error_code = "connection_not_found";
      ack.error_message = "the channel is gone";
    } else if (ec) {
      ack.error_code = "store_failed";
      ack.error_message = "the connector could not record the channel's new state (its store cannot write now)";
    } else {
      ack.error_code = "internal_error";
      ack.error_message = "the connector could not describe the channel";
    }
    deliver_answer(encode_packet(ack));
    return false;
  }
  (*ack.payload)["connection_descriptor"] = std::move(*d);
  deliver_answer(encode_packet(ack));
  return true;
}

void ws_session::on_auth_status(const packet_view& p, const channel& c, const json::object& payload) {
  auto* run_id = string_member(payload, "auth_session_id");
  if (!run_id) return send_error(&p, "invalid_packet", "payload.auth_session_id must be a string");
  bool refresh = false;
  if (auto* v = payload.if_contains("refresh"); v && !v->is_null()) {
    if (!v->is_bool()) return send_error(&p, "invalid_packet", "payload.refresh must be a boolean");
    refresh = v->as_bool();
  }
  auto run = ctx_.channels.find_auth(c.id, *run_id);
  if (!run) return send_error(&p, "auth_session_not_found", "no auth session with that id on this channel");
  auto ack = reply_to(p, "auth.status.ack");
  ack.payload = json::object{{"connector_channel_id", c.id}, {"flow_id", run->flow_id}, {"auth_session_id", run->id}};
  auto& out = *ack.payload;
  switch (run->state) {
    case auth_run_state::authenticated:
      if (c.authenticated) {
        auto d = ctx_.channels.descriptor(*connector_, c, profiles_);
        if (!d) return send_error(&p, "internal_error", "the connector could not describe the channel");
        out["status"] = "authenticated";
        out["connection_descriptor"] = std::move(*d);
      } else {
        out["status"] = "unauthenticated";
        out["message"] = "signed out since";
      }
      return send(encode_packet(ack));
    case auth_run_state::canceled:
      out["status"] = "unauthenticated";
      out["message"] = "the auth session was canceled";
      return send(encode_packet(ack));
    case auth_run_state::expired:
      out["status"] = "expired";
      out["message"] = "the auth session expired; start a new one";
      return send(encode_packet(ack));
    case auth_run_state::failed:
      out["status"] = "failed";
      ack.error_code = run->failure_code.empty() ? "auth_failed" : run->failure_code;
      ack.error_message = "the auth session failed";
      return send(encode_packet(ack));
    case auth_run_state::running: break;
  }
  connector_->auth_status(
      c.id, run->flow_id, run->id, refresh, auth_call_on(c.id), auth_timeout(),
      [self = shared_from_this(), ack = std::move(ack), id = run->id](call_result r) mutable {
        self->finish_auth(std::move(ack), std::move(id), {}, std::move(r), true);
      });
}

void ws_session::on_auth_cancel(const packet_view& p, const channel& c, const json::object& payload) {
  auto* run_id = string_member(payload, "auth_session_id");
  if (!run_id) return send_error(&p, "invalid_packet", "payload.auth_session_id must be a string");
  auto ack = reply_to(p, "auth.cancel.ack");
  ack.payload = json::object{{"connector_channel_id", c.id}, {"auth_session_id", *run_id}};
  auto& out = *ack.payload;
  auto run = ctx_.channels.find_auth(c.id, *run_id);
  auto answer = [&](std::string_view status, std::string_view message) {
    out["status"] = status;
    out["auth_status"] = auth_status_of(c);
    out["message"] = message;
    send(encode_packet(ack));
  };
  if (!run) return answer("not_found", "no auth session with that id on this channel");
  if (run->state == auth_run_state::canceled) return answer("canceled", "Authentication canceled");
  if (run->state == auth_run_state::failed) return answer("ignored", "the auth session had already failed");
  if (run->state == auth_run_state::authenticated) {
    if (c.authenticated)
      if (auto d = ctx_.channels.descriptor(*connector_, c, profiles_)) out["connection_descriptor"] = std::move(*d);
    return answer("ignored", "authentication had already completed");
  }
  // Marked first, so a status racing with the plugin's cancel already reads canceled.
  {
    correlation_scope cause(run->id);
    ctx_.channels.end_auth(run->id, auth_run_state::canceled);
  }
  out["status"] = "canceled";
  out["auth_status"] = auth_status_of(c);
  out["message"] = "Authentication canceled";
  connector_->auth_cancel(
      c.id, run->flow_id, run->id, auth_call_on(c.id), auth_timeout(),
      [self = shared_from_this(), ack = std::move(ack)](call_result r) mutable {
        // The run is over for xAgent whatever the plugin says; its trouble is for the log.
        if (!r.ok) spdlog::warn("[plugin {}] auth cancel: {}", self->connector_->id(), r.code);
        self->deliver_answer(encode_packet(ack));
      });
}

void ws_session::on_auth_logout(const packet_view& p, const channel& c, const json::object&) {
  auto ack = reply_to(p, "auth.logout.ack");
  ack.payload = json::object{{"connector_channel_id", c.id}};
  connector_->auth_logout(
      c.id, auth_call_on(c.id), auth_timeout(),
      [self = shared_from_this(), ack = std::move(ack), channel_id = c.id](call_result r) mutable {
        if (!r.ok) {
          // The target login may still stand: keep the host's view as it is and say why.
          set_call_error(ack, r, "auth");
          return self->deliver_answer(encode_packet(ack));
        }
        (*ack.payload)["status"] = "ok";
        // Signed out: the channel holds no shared consumer any more; one that lost its last holder stops.
        self->connector_->stop_consumers(self->ctx_.consumers.release_channel(self->connector_->id(), channel_id),
                                         std::chrono::seconds(self->ctx_.cfg.tools.timeout_s));
        std::string packet_id = ack.reply_to;  // the ack moves on below
        correlation_scope cause(packet_id);   // the sign-out is the auth.logout packet's (/events)
        self->ctx_.channels.logout(channel_id, [self, ack = std::move(ack)](std::optional<channel> c,
                                                                             std::error_code ec) mutable {
          self->deliver_with_descriptor(std::move(ack), c, ec);
        });
      });
}

void ws_session::on_tool_invoke(const packet_view& p, const channel& c, const json::object& payload) {
  auto* tool_id = string_member(payload, "tool_id");
  if (!tool_id || tool_id->empty()) return send_error(&p, "invalid_packet", "payload.tool_id must be a string");
  const json::object empty;
  const json::object* arguments = &empty;
  const json::object* context = &empty;
  for (auto [key, slot] : {std::pair{"arguments", &arguments}, std::pair{"context", &context}}) {
    if (auto* v = payload.if_contains(key); v && !v->is_null()) {
      if (!v->is_object()) return send_error(&p, "invalid_packet", std::string("payload.") + key + " must be an object");
      *slot = &v->as_object();
    }
  }
  std::string idempotency_key;
  if (auto* v = payload.if_contains("idempotency_key"); v && !v->is_null()) {
    if (!v->is_string()) return send_error(&p, "invalid_packet", "payload.idempotency_key must be a string");
    idempotency_key = v->as_string();
  } else if (auto* call_id = string_member(*context, "tool_call_id")) {
    idempotency_key = *call_id;
  }

  auto manifest = connector_->manifest();
  const auto& tools = manifest->tools;
  auto tool = tools.find(std::string(*tool_id));
  if (tool == tools.end()) return send_error(&p, "tool_not_found", "the card declares no tool with that id");
  if (!c.authenticated)
    return send_error(&p, "connection_not_authenticated", "the channel must authenticate before tools run");
  if (c.binding_lost())
    return send_error(&p, "connection_not_authenticated", "the target refused the channel's credential: sign in again");
  if (ctx_.channels.tool_status(*connector_, c, profiles_, *tool_id) != "available")
    return send_error(&p, "connector_channel_unavailable", "the tool is not available on this channel");

  auto ack = reply_to(p, "tool.invoke.ack");
  ack.payload = json::object{{"tool_id", *tool_id}};
  auto timeout = tool->second.timeout_ms > 0 ? std::chrono::milliseconds(tool->second.timeout_ms)
                                             : std::chrono::milliseconds(ctx_.cfg.tools.timeout_s * 1000LL);
  auto* call_id = string_member(*context, "tool_call_id");
  auto progress = [weak = weak_from_this(), tool = std::string(*tool_id), channel_id = c.id,
                   tool_call_id = std::string(call_id ? *call_id : "")](std::string_view report) {
    auto self = weak.lock();
    auto push = self ? progress_push(report, tool, channel_id, tool_call_id) : std::nullopt;
    if (push) self->push(encode_packet(*push));
    return push.has_value();
  };
  // The answer comes back on this socket's strand, where it is written: one hand-off from the plugin pool, not two.
  auto run = [conn = connector_, strand = ctx_.channels.strand_for(*connector_, c.id), channel_id = c.id,
              tool = std::string(*tool_id), args = json::serialize(*arguments), ctx_json = json::serialize(*context),
              timeout, progress = std::move(progress),
              answer_on = strand()](std::function<void(tool_outcome, bool)> finish) mutable {
    conn->invoke_tool(
        channel_id, tool, std::move(args), std::move(ctx_json), strand, timeout,
        [finish = std::move(finish)](call_result r) {
          bool keep = replayable(r);
          finish(outcome_of(std::move(r)), keep);
        },
        std::move(progress), answer_on);
  };
  auto answer = [self = shared_from_this(), ack = std::move(ack), channel_id = c.id](tool_outcome o) mutable {
    answer_tool(ack, std::move(o), self->connector_->id(), channel_id, self->ctx_.message_files);
    self->deliver_answer(encode_packet(ack));
  };
  ++in_flight_;
  if (tool->second.side_effect && !idempotency_key.empty()) {
    ctx_.channels.calls().run_once(tool_calls::key_for(connector_->id(), c.id, idempotency_key), std::move(run),
                                   std::move(answer));
  } else {
    run([answer = std::move(answer)](tool_outcome o, bool) mutable { answer(std::move(o)); });
  }
}

}  // namespace xconn
