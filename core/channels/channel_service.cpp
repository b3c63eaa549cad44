#include "core/channels/channel_service.hpp"

#include "core/channels/descriptor.hpp"
#include "core/wire/packet.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace xconn {
namespace json = boost::json;

channel_service::channel_service(store& db, const config& cfg, connector_registry& connectors,
                                 boost::asio::io_context& io, const sealer& seal, event_log& events, dropped_fn on_dropped,
                                 channel_table::now_fn now)
    : db_(db),
      cfg_(cfg),
      connectors_(connectors),
      io_(io),
      table_(std::chrono::seconds(cfg.leases.unauthenticated_channel_s), std::move(now),
             {static_cast<std::size_t>(cfg.leases.max_temporary_per_connector_id),
              static_cast<std::size_t>(cfg.leases.max_temporary_per_connector)}),
      calls_(db, std::chrono::seconds(cfg.tools.idempotency_s)),
      credentials_(db, seal),
      events_(events),
      dropped_(std::move(on_dropped)),
      // Often enough that a temporary channel lives at most a quarter longer than its lease.
      sweep_timer_(io.get_executor(),
                   periodic_timer::quarter_of(std::chrono::seconds(cfg.leases.unauthenticated_channel_s),
                                              std::chrono::milliseconds(250), std::chrono::seconds(30)),
                   [this] { sweep(); }) {}

std::size_t channel_service::load() {
  std::size_t n = 0;
  std::lock_guard lock(mutex_);
  db_.scan(database, "", [&](std::string_view key, std::string_view value) {
    if (auto c = channel::from_record(key, value)) {
      shown_status_[c->id] = connection_status(*c, health_state::healthy, false);
      table_.restore(std::move(*c));
      ++n;
    } else {
      spdlog::warn("channel record {} is unreadable; skipped", key);
    }
    return true;
  });
  calls_.load();
  return n;
}

void channel_service::on_signed_out(signed_out_fn fn) {
  std::lock_guard lock(mutex_);
  signed_out_ = std::move(fn);
}

void channel_service::signed_out(const std::string& plugin_id, const std::string& channel_id) {
  signed_out_fn tell;
  {
    std::lock_guard lock(mutex_);
    tell = signed_out_;
  }
  if (tell) tell(plugin_id, channel_id);
}

void channel_service::start() { sweep_timer_.start(); }

void channel_service::stop() { sweep_timer_.stop(); }

void channel_service::sweep() {
  std::vector<std::string> dropped, plugins;
  {
    std::lock_guard lock(mutex_);
    dropped = table_.expire(&plugins);
    for (const auto& id : dropped) {
      strands_.erase(id);
      shown_status_.erase(id);
    }
  }
  if (!dropped.empty()) spdlog::debug("{} temporary channels expired", dropped.size());
  if (!dropped.empty() && dropped_) dropped_(dropped);
  for (std::size_t i = 0; i < dropped.size(); ++i) {
    signed_out(plugins[i], dropped[i]);  // never signed in, yet a sign-in the host could not keep may have held some
    tell_ended(plugins[i], dropped[i], "expired");
  }
  calls_.sweep();
}

void channel_service::push_descriptors(const std::string& plugin_id) {
  auto conn = connectors_.find(plugin_id);
  if (!conn) return;
  std::vector<channel> of_plugin;
  {
    std::lock_guard lock(mutex_);
    of_plugin = table_.of_plugin(plugin_id);  // with no socket too: its status changes all the same (/events)
  }
  for (const auto& c : of_plugin)
    if (c.authenticated) push_descriptor(*conn, c.id, "plugin_health");
}

channel_service::open_outcome channel_service::open(const connector& conn, std::string_view requested,
                                                    const std::shared_ptr<channel_route>& route) {
  open_outcome out;
  bool owner_moved = false;
  {
    std::lock_guard lock(mutex_);
    auto cap = table_.temporary_cap_reached(conn.id(), requested, route->connector_id());
    if (cap == "owner") out.cap_reached = "leases.max_temporary_per_connector_id";
    if (cap == "plugin") out.cap_reached = "leases.max_temporary_per_connector";
    if (!cap.empty()) return out;
    auto* before = requested.empty() ? nullptr : table_.find(requested);
    std::string old_owner = before ? before->owner : std::string();
    std::tie(out.opened, out.created) = table_.open(conn.id(), requested, route->connector_id(), route);
    owner_moved = !out.created && out.opened.persistent && old_owner != out.opened.owner;
  }
  if (owner_moved) persist(out.opened);
  return out;
}

route_check channel_service::check(std::string_view id, std::string_view plugin_id, const channel_route* route,
                                   channel* out) {
  std::lock_guard lock(mutex_);
  return table_.check(id, plugin_id, route, out);
}

bool channel_service::close(std::string_view id, const channel_route* route) {
  std::string plugin_id;
  {
    std::lock_guard lock(mutex_);
    if (!table_.close(id, route)) return false;
    plugin_id = table_.find(id)->plugin_id;
  }
  tell_ended(plugin_id, std::string(id), "closed");
  return true;
}

void channel_service::tell_ended(const std::string& plugin_id, const std::string& channel_id, std::string_view reason) {
  auto conn = connectors_.find(plugin_id);
  if (!conn) return;  // a plugin that is not loaded has nothing to drop
  // A channel still registered keeps its order with the calls before; a gone one has no strand any more.
  auto on = reason == "closed" ? strand_for(*conn, channel_id) : conn->make_strand();
  conn->channel_end(channel_id, std::string(reason), on, std::chrono::seconds(cfg_.tools.timeout_s));
}

void channel_service::authenticate(std::string_view id, json::object binding, std::string_view credentials,
                                   channel_done done) {
  std::optional<channel> before, c;
  {
    std::lock_guard lock(mutex_);
    if (const auto* known = table_.find(id)) before = *known;
    c = table_.authenticate(id, std::move(binding));
  }
  if (!c) return done(std::nullopt, {});
  // Recorded as the table changes, so that no push in between takes the change for its own.
  note_status(c->id, "signed_in");
  write_batch sealed;
  credentials_.stage(c->plugin_id, c->id, credentials, sealed);
  persist(*c, [this, c, before = std::move(*before), done = std::move(done)](std::error_code ec) {
    if (ec) undo_sign_in(before);
    done(c, ec);
  }, std::move(sealed));
}

void channel_service::undo_sign_in(const channel& before) {
  {
    std::lock_guard lock(mutex_);
    table_.undo_authenticate(before);
  }
  note_status(before.id, "sign_in_not_recorded");
  // The plugin accepted a first sign-in the host cannot keep: it signs the channel out again, so that both hold
  // the same state. A renewed sign-in keeps the plugin's session: the channel was signed in before and stays so.
  if (before.authenticated) return;
  signed_out(before.plugin_id, before.id);
  auto conn = connectors_.find(before.plugin_id);
  if (!conn) return;
  conn->auth_logout(before.id, strand_for(*conn, before.id), std::chrono::seconds(cfg_.tools.timeout_s),
                    [id = before.id](call_result r) {
                      if (!r.ok) spdlog::warn("channel {}: the plugin did not sign out after an unrecorded sign-in ({})",
                                              id, r.code);
                    });
}

std::optional<std::string> channel_service::credentials(const connector& conn, const std::string& channel_id) const {
  return credentials_.get(conn.id(), channel_id);
}

void channel_service::logout(std::string_view id, channel_done done) {
  std::optional<channel> c;
  {
    std::lock_guard lock(mutex_);
    c = table_.logout(id);
  }
  if (!c) return done(std::nullopt, {});
  note_status(c->id, "signed_out");
  signed_out(c->plugin_id, c->id);
  if (!c->persistent) return done(c, {});
  write_batch forget;
  channel_credentials::stage_erase(c->id, forget);
  persist(*c, [c, done = std::move(done)](std::error_code ec) { done(c, ec); }, std::move(forget));
}

std::string channel_service::report_status(const connector& conn, std::string_view id,
                                          std::string_view report_json) {
  json::error_code ec;
  auto report = json::parse(report_json, ec);
  if (ec || !report.is_object()) return "the report is not a JSON object";
  const auto& r = report.as_object();
  for (const auto& field : r)
    if (field.key() != "status" && field.key() != "tools" && field.key() != "reason")
      return "the report has an unknown member";
  auto* status = r.if_contains("status");
  if (!status || !status->is_string() || !is_target_status(status->as_string()))
    return "status must be connected, degraded, offline, expired, revoked or error";
  std::optional<json::array> tools;
  if (auto* t = r.if_contains("tools")) {
    if (!t->is_array()) return "tools must be an array";
    if (auto why = binding_violation(json::object{{"tools", *t}}, *conn.manifest()); !why.empty()) return why;
    tools = t->as_array();
  }
  // A short code why (target_unreachable, ...): shown on /events and the admin list, never in the descriptor.
  std::string reason;
  if (auto* why = r.if_contains("reason")) {
    if (!why->is_string() || !is_status_reason(why->as_string())) return "reason must be 1 to 64 of a-z and _";
    reason = why->as_string();
  }
  std::optional<channel> c;
  {
    std::lock_guard lock(mutex_);
    c = table_.set_target_status(id, conn.id(), std::string(status->as_string()), std::move(tools), reason);
  }
  if (!c) return "no signed-in channel of this plugin has that id";
  note_status(c->id, "plugin_report");
  std::string reported(status->as_string());
  spdlog::info("[plugin {}] channel {} reported {}", conn.id(), c->id, reported);
  json::object reported_payload{{"direction", "inbound"}, {"status", reported}};
  if (!c->target_reason.empty()) reported_payload["status_reason"] = c->target_reason;
  events_.record(conn.id(), {"status", c->id, "", "", std::move(reported_payload)});
  write_batch also;
  if (c->binding_lost()) {
    channel_credentials::stage_erase(c->id, also);  // refused by the target: worthless now
    signed_out(c->plugin_id, c->id);
  }
  persist(
      *c,
      [this, plugin_id = conn.id(), channel_id = c->id](std::error_code ec) {
        if (ec) spdlog::error("[plugin {}] status of channel {} not recorded: {}", plugin_id, channel_id, ec.message());
        if (auto owner = connectors_.find(plugin_id)) push_descriptor(*owner, channel_id, "plugin_report");
      },
      std::move(also));
  return {};
}

void channel_service::restore(connector& conn) {
  if (!conn.restores_channels()) return;
  std::vector<channel> signed_in;
  {
    std::lock_guard lock(mutex_);
    signed_in = table_.begin_verifying(conn.id());
  }
  for (const auto& c : signed_in) {
    push_descriptor(conn, c.id, "restoring");
    auto credentials = credentials_.get(conn.id(), c.id);
    conn.channel_restore(c.id, json::serialize(c.binding), credentials.value_or("{}"), strand_for(conn, c.id),
                         std::chrono::seconds(cfg_.tools.timeout_s),
                         [this, plugin_id = conn.id(), channel_id = c.id](call_result r) {
                           if (auto owner = connectors_.find(plugin_id)) restore_answered(*owner, channel_id, r);
                         });
  }
}

void channel_service::restore_answered(connector& conn, const std::string& channel_id, const call_result& r) {
  if (!r.ok)
    spdlog::warn("[plugin {}] channel {} not verified: {}", conn.id(), channel_id,
                 r.timed_out ? "no answer in time" : r.code);
  // An expired or revoked answer is released by report_status, as the plugin's own report would be.
  auto why = r.ok ? report_status(conn, channel_id, r.json) : "the plugin failed";
  if (!why.empty()) {
    if (r.ok) spdlog::warn("[plugin {}] restore answer for {} refused: {}", conn.id(), channel_id, why);
    report_status(conn, channel_id, R"({"status":"error"})");
  }
  // A restore that ends in error did not take the channel up again: the plugin runs nothing for it, so the
  // references it held before the restart are released (a later sign-in or recovery acquires them anew).
  bool unconfirmed = false;
  {
    std::lock_guard lock(mutex_);
    const auto* c = table_.find(channel_id);
    unconfirmed = c && c->authenticated && c->target_status == "error";
  }
  if (unconfirmed) signed_out(conn.id(), channel_id);
}

std::string channel_service::begin_auth(std::string_view channel_id, std::string_view flow_id,
                                        std::string secret_inputs) {
  std::string run_id;
  {
    std::lock_guard lock(mutex_);
    run_id = table_.begin_auth(channel_id, flow_id, std::move(secret_inputs));
  }
  note_status(channel_id, "auth_started");
  return run_id;
}

std::optional<auth_run> channel_service::find_auth(std::string_view channel_id, std::string_view auth_session_id) {
  std::lock_guard lock(mutex_);
  return table_.find_auth(channel_id, auth_session_id);
}

void channel_service::end_auth(std::string_view auth_session_id, auth_run_state state, std::string failure_code) {
  std::string channel_id;
  {
    std::lock_guard lock(mutex_);
    channel_id = table_.end_auth(auth_session_id, state, std::move(failure_code));
  }
  // An authenticated run is recorded when the sign-in is durable (authenticate).
  if (!channel_id.empty() && state != auth_run_state::authenticated) note_status(channel_id, "auth_ended");
}

std::optional<json::object> channel_service::descriptor(const connector& conn, const channel& c,
                                                        const std::vector<std::string>& profiles) {
  bool running = false;
  {
    std::lock_guard lock(mutex_);
    running = table_.auth_running(c.id);
  }
  auto manifest = conn.manifest();
  auto d = build_descriptor({*manifest, c, profiles, conn.health().health, running});
  if (auto why = descriptor_violation(d, *manifest, c.id); !why.empty()) {
    spdlog::error("[plugin {}] descriptor of {} withheld: {}", conn.id(), c.id, why);
    return std::nullopt;
  }
  return d;
}

std::string channel_service::tool_status(const connector& conn, const channel& c,
                                         const std::vector<std::string>& profiles, std::string_view tool_id) {
  return std::string(xconn::tool_status({*conn.manifest(), c, profiles}, tool_id));
}

void channel_service::note_status(std::string_view channel_id, std::string_view reason) {
  std::string plugin_id, previous, now, status_reason;
  {
    std::lock_guard lock(mutex_);
    const auto* c = table_.find(channel_id);
    if (!c) return;
    plugin_id = c->plugin_id;
    auto conn = connectors_.find(plugin_id);
    now = connection_status(*c, conn ? conn->health().health : health_state::healthy, table_.auth_running(channel_id));
    auto& shown = shown_status_[std::string(channel_id)];
    if (shown == now) return;
    previous = shown.empty() ? "created" : shown;
    shown = now;
    if (now == c->target_status) status_reason = c->target_reason;  // the plugin's why, when its word shows
  }
  json::object payload{{"status", now}, {"previous_status", previous}, {"reason", reason}};
  if (!status_reason.empty()) payload["status_reason"] = status_reason;
  events_.record(plugin_id, {"ChannelStatusChanged", std::string(channel_id), "", "", std::move(payload)});
}

void channel_service::push_descriptor(const connector& conn, std::string_view channel_id, std::string_view reason) {
  note_status(channel_id, reason);
  std::optional<channel> c;
  std::shared_ptr<channel_route> route;
  {
    std::lock_guard lock(mutex_);
    if (auto* found = table_.find(channel_id)) {
      c = *found;
      route = found->route.lock();
    }
  }
  if (!c || !route) return;
  auto d = descriptor(conn, *c, route->profiles());
  if (!d) return;
  outgoing_packet push;
  push.type = "connection.descriptor.push";
  push.connector_channel_id = c->id;
  push.payload = json::object{{"connection_descriptor", std::move(*d)}};
  route->push(encode_packet(push));
}

std::pair<std::size_t, std::size_t> channel_service::counts(std::string_view plugin_id) {
  std::lock_guard lock(mutex_);
  return table_.counts(plugin_id);
}

void channel_service::remove(const std::vector<std::string>& ids, std::function<void(std::error_code)> done) {
  write_batch batch;
  std::vector<std::pair<std::string, std::string>> ended;  // plugin, channel
  {
    std::lock_guard lock(mutex_);
    for (const auto& id : ids) {
      if (const auto* c = table_.find(id)) ended.emplace_back(c->plugin_id, id);
      table_.erase(id);
      strands_.erase(id);
      shown_status_.erase(id);
      batch.erase(std::string(database), id);
      channel_credentials::stage_erase(id, batch);
    }
  }
  if (dropped_) dropped_(ids);
  for (const auto& [plugin_id, channel_id] : ended) signed_out(plugin_id, channel_id);
  for (const auto& [plugin_id, channel_id] : ended) tell_ended(plugin_id, channel_id, "deregistered");
  db_.write(std::move(batch), [done = std::move(done)](std::error_code ec) {
    if (ec) spdlog::error("deregistered channels could not be erased: {}", ec.message());
    if (done) done(ec);
  });
}

std::vector<channel> channel_service::owned_by(std::string_view connector_id) {
  std::lock_guard lock(mutex_);
  return table_.owned_by(connector_id);
}

std::vector<std::pair<channel, std::string>> channel_service::of_plugin(std::string_view plugin_id) {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<channel, std::string>> out;
  for (auto& c : table_.of_plugin(plugin_id)) {
    auto shown = shown_status_.find(c.id);
    std::string status = shown == shown_status_.end() ? std::string() : shown->second;
    out.emplace_back(std::move(c), std::move(status));
  }
  return out;
}

std::vector<std::string> channel_service::owners() {
  std::lock_guard lock(mutex_);
  return table_.owners();
}

std::optional<channel_service::route_info> channel_service::route_of(std::string_view channel_id) {
  std::lock_guard lock(mutex_);
  const auto* c = table_.find(channel_id);
  if (!c) return std::nullopt;
  return route_info{c->plugin_id, c->route.lock(), c->authenticated, c->binding_lost()};
}

std::optional<use_refusal> channel_service::credential_refusal(std::string_view channel_id) {
  std::lock_guard lock(mutex_);
  const auto* c = table_.find(channel_id);
  if (!c) return use_refusal{"connection_not_authenticated", false, "the channel is not signed in to the target"};
  return xconn::credential_refusal(*c);
}

connector::strand channel_service::strand_for(connector& conn, std::string_view channel_id) {
  std::lock_guard lock(mutex_);
  auto it = strands_.find(channel_id);
  if (it == strands_.end()) it = strands_.emplace(std::string(channel_id), conn.make_strand()).first;
  return it->second;
}

void channel_service::persist(const channel& c, std::function<void(std::error_code)> done, write_batch also) {
  write_batch batch = std::move(also);
  batch.put(std::string(database), c.id, json::serialize(c.to_record()));
  db_.write(std::move(batch), [id = c.id, done = std::move(done)](std::error_code ec) {
    if (ec) spdlog::error("channel {} could not be saved: {}", id, ec.message());
    if (done) done(ec);
  });
}

}  // namespace xconn
