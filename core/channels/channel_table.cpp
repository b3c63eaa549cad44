#include "core/channels/channel_table.hpp"

#include <algorithm>

#include "core/base/ids.hpp"

#include <boost/json.hpp>

namespace xconn {
namespace json = boost::json;

bool is_target_status(std::string_view status) {
  for (std::string_view s : {"connected", "degraded", "offline", "expired", "revoked", "error"})
    if (status == s) return true;
  return false;
}

bool is_status_reason(std::string_view reason) {
  if (reason.empty() || reason.size() > 64) return false;
  for (char ch : reason)
    if (!((ch >= 'a' && ch <= 'z') || ch == '_')) return false;
  return true;
}

std::string_view error_code_for(route_check r) {
  switch (r) {
    case route_check::ok: return "";
    case route_check::id_required: return "connector_channel_id_required";
    case route_check::not_found: return "connection_not_found";
    case route_check::other_plugin: return "connector_channel_connector_mismatch";
    case route_check::not_open: return "channel_not_open";
  }
  return "channel_not_open";
}

json::object channel::to_record() const {
  json::object r{{"plugin_id", plugin_id}, {"owner", owner}, {"authenticated", authenticated}, {"created_at", created_at}};
  if (authenticated) r["binding"] = binding;
  if (authenticated && !target_status.empty()) r["target_status"] = target_status;
  if (authenticated && !target_status.empty() && !target_reason.empty()) r["target_reason"] = target_reason;
  return r;
}

std::optional<channel> channel::from_record(std::string_view id, std::string_view text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto* plugin = o.if_contains("plugin_id");
  auto* owner = o.if_contains("owner");
  auto* authenticated = o.if_contains("authenticated");
  if (!plugin || !plugin->is_string() || !owner || !owner->is_string() || !authenticated || !authenticated->is_bool())
    return std::nullopt;
  channel c;
  c.id = id;
  c.plugin_id = plugin->as_string();
  c.owner = owner->as_string();
  c.persistent = true;
  c.authenticated = authenticated->as_bool();
  if (auto* b = o.if_contains("binding"); b && b->is_object()) c.binding = b->as_object();
  if (auto* t = o.if_contains("created_at"); t && t->is_int64()) c.created_at = t->as_int64();
  if (auto* s = o.if_contains("target_status"); s && s->is_string() && is_target_status(s->as_string()))
    c.target_status = s->as_string();
  if (auto* r = o.if_contains("target_reason"); r && r->is_string() && !c.target_status.empty())
    c.target_reason = r->as_string();
  return c;
}

channel_table::channel_table(std::chrono::seconds unauthenticated_ttl, now_fn now, temporary_caps caps)
    : ttl_(unauthenticated_ttl), now_(std::move(now)), caps_(caps) {}

namespace {
void add_count(std::map<std::string, std::size_t, std::less<>>& counts, const std::string& key, int delta) {
  auto& n = counts[key];
  n = delta > 0 ? n + 1 : n - 1;
  if (n == 0) counts.erase(key);  // owners come and go: no entry outlives its channels
}
std::size_t count_of(const std::map<std::string, std::size_t, std::less<>>& counts, std::string_view key) {
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}
}  // namespace

void channel_table::count_temporary(const channel& c, int delta) {
  if (c.persistent) return;
  add_count(temporary_by_owner_, c.owner, delta);
  add_count(temporary_by_plugin_, c.plugin_id, delta);
}

std::size_t channel_table::temporary_owned_by(std::string_view owner) const {
  return count_of(temporary_by_owner_, owner);
}
std::size_t channel_table::temporary_of(std::string_view plugin_id) const {
  return count_of(temporary_by_plugin_, plugin_id);
}

std::string_view channel_table::temporary_cap_reached(std::string_view plugin_id, std::string_view requested,
                                                      std::string_view owner) const {
  auto it = requested.empty() ? channels_.end() : channels_.find(requested);
  if (it != channels_.end() && it->second.plugin_id == plugin_id) return "";  // reused, not created
  if (temporary_owned_by(owner) >= caps_.per_owner) return "owner";
  if (temporary_of(plugin_id) >= caps_.per_plugin) return "plugin";
  return "";
}

std::pair<channel, bool> channel_table::open(std::string_view plugin_id, std::string_view requested, std::string owner,
                                             std::weak_ptr<channel_route> route) {
  auto it = requested.empty() ? channels_.end() : channels_.find(requested);
  bool created = it == channels_.end() || it->second.plugin_id != plugin_id;
  if (created) {
    channel c;
    c.id = random_id("cch_");
    c.plugin_id = plugin_id;
    c.created_at = unix_ms();
    it = channels_.emplace(c.id, std::move(c)).first;
  } else {
    count_temporary(it->second, -1);  // counted again below, under its new owner
  }
  auto& c = it->second;
  c.owner = std::move(owner);
  c.route = std::move(route);
  c.last_used = now_();
  count_temporary(c, +1);
  return {c, created};
}

void channel_table::restore(channel c) {
  c.last_used = now_();
  std::string id = c.id;
  if (auto it = channels_.find(id); it != channels_.end()) count_temporary(it->second, -1);
  count_temporary(c, +1);
  channels_.insert_or_assign(std::move(id), std::move(c));
}

route_check channel_table::check(std::string_view id, std::string_view plugin_id, const channel_route* route,
                                 channel* out) {
  if (id.empty()) return route_check::id_required;
  auto it = channels_.find(id);
  if (it == channels_.end()) return route_check::not_found;
  auto& c = it->second;
  if (c.plugin_id != plugin_id) return route_check::other_plugin;
  auto current = c.route.lock();
  if (!current || current.get() != route) return route_check::not_open;
  c.last_used = now_();
  if (out) *out = c;
  return route_check::ok;
}

const channel* channel_table::find(std::string_view id) const {
  auto it = channels_.find(id);
  return it == channels_.end() ? nullptr : &it->second;
}

bool channel_table::close(std::string_view id, const channel_route* route) {
  auto it = channels_.find(id);
  if (it == channels_.end()) return false;
  auto current = it->second.route.lock();
  if (!current || current.get() != route) return false;
  it->second.route.reset();
  it->second.last_used = now_();
  return true;
}

std::optional<channel> channel_table::authenticate(std::string_view id, json::object binding) {
  auto it = channels_.find(id);
  if (it == channels_.end()) return std::nullopt;
  auto& c = it->second;
  count_temporary(c, -1);
  c.authenticated = true;
  c.persistent = true;
  c.binding = std::move(binding);
  c.target_status.clear();  // a new sign-in starts from the plugin's fresh answer
  c.target_reason.clear();
  c.verifying = false;
  c.last_used = now_();
  return c;
}

void channel_table::undo_authenticate(const channel& before) {
  auto it = channels_.find(before.id);
  if (it == channels_.end()) return;
  auto& c = it->second;
  count_temporary(c, -1);
  c.authenticated = before.authenticated;
  c.persistent = before.persistent;
  c.binding = before.binding;
  c.target_status = before.target_status;
  c.target_reason = before.target_reason;
  c.verifying = before.verifying;
  count_temporary(c, +1);
}

std::optional<channel> channel_table::set_target_status(std::string_view id, std::string_view plugin_id,
                                                        std::string status, std::optional<json::array> tools,
                                                        std::string reason) {
  auto it = channels_.find(id);
  if (it == channels_.end() || it->second.plugin_id != plugin_id || !it->second.authenticated) return std::nullopt;
  auto& c = it->second;
  c.target_reason = status == "connected" ? std::string() : std::move(reason);
  c.target_status = status == "connected" ? std::string() : std::move(status);  // "connected" is no news
  c.verifying = false;
  if (tools) c.binding["tools"] = std::move(*tools);
  return c;
}

std::optional<channel> channel_table::logout(std::string_view id) {
  auto it = channels_.find(id);
  if (it == channels_.end()) return std::nullopt;
  auto& c = it->second;
  c.authenticated = false;
  c.binding.clear();
  c.target_status.clear();
  c.target_reason.clear();
  c.verifying = false;
  c.last_used = now_();
  auto [first, last] = runs_by_channel_.equal_range(id);
  for (auto it = first; it != last; ++it) {
    auto& run = runs_.find(it->second)->second;
    if (run.state == auth_run_state::running) {
      run.state = auth_run_state::canceled;
      run.last_used = c.last_used;
    }
  }
  return c;
}

channel_table::run_iterator channel_table::erase_run(run_iterator run) {
  auto [first, last] = runs_by_channel_.equal_range(run->second.channel_id);
  for (auto it = first; it != last; ++it)
    if (it->second == run->first) {
      runs_by_channel_.erase(it);
      break;
    }
  return runs_.erase(run);
}

std::vector<std::string> channel_table::expire(std::vector<std::string>* plugins) {
  auto now = now_();
  std::vector<std::string> dropped;
  for (auto it = channels_.begin(); it != channels_.end();) {
    if (!it->second.persistent && now - it->second.last_used >= ttl_) {
      dropped.push_back(it->first);
      if (plugins) plugins->push_back(it->second.plugin_id);
      count_temporary(it->second, -1);
      it = channels_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = runs_.begin(); it != runs_.end();) {
    bool channel_gone = !channels_.contains(it->second.channel_id);
    bool ended_long_ago = it->second.state != auth_run_state::running && now - it->second.last_used >= ended_run_kept;
    // A run nobody asked about for as long as an unused temporary channel lives is abandoned.
    bool abandoned = now - it->second.last_used >= std::max<std::chrono::seconds>(ttl_, ended_run_kept);
    it = channel_gone || ended_long_ago || abandoned ? erase_run(it) : std::next(it);
  }
  return dropped;
}

bool channel_table::erase(std::string_view id) {
  auto it = channels_.find(id);
  if (it == channels_.end()) return false;
  count_temporary(it->second, -1);
  channels_.erase(it);
  auto [first, last] = runs_by_channel_.equal_range(id);
  for (auto it = first; it != last; ++it) runs_.erase(it->second);
  runs_by_channel_.erase(first, last);
  return true;
}

std::vector<channel> channel_table::owned_by(std::string_view connector_id) const {
  std::vector<channel> out;
  for (const auto& [id, c] : channels_)
    if (c.owner == connector_id) out.push_back(c);
  return out;
}

std::vector<channel> channel_table::of_plugin(std::string_view plugin_id) const {
  std::vector<channel> out;
  for (const auto& [id, c] : channels_)
    if (c.plugin_id == plugin_id) out.push_back(c);
  return out;
}

std::vector<std::string> channel_table::owners() const {
  std::vector<std::string> out;
  for (const auto& [id, c] : channels_)
    if (!c.owner.empty() && std::find(out.begin(), out.end(), c.owner) == out.end()) out.push_back(c.owner);
  return out;
}

std::string channel_table::begin_auth(std::string_view channel_id, std::string_view flow_id,
                                      std::string secret_inputs) {
  auth_run run;
  run.secret_inputs = std::move(secret_inputs);
  run.id = random_id("auth_");
  run.channel_id = channel_id;
  run.flow_id = flow_id;
  run.last_used = now_();
  std::string id = run.id;
  runs_by_channel_.emplace(run.channel_id, id);
  runs_.emplace(id, std::move(run));
  return id;
}

std::optional<auth_run> channel_table::find_auth(std::string_view channel_id, std::string_view auth_session_id) {
  auto it = runs_.find(auth_session_id);
  if (it == runs_.end() || it->second.channel_id != channel_id) return std::nullopt;
  it->second.last_used = now_();
  return it->second;
}

std::string channel_table::end_auth(std::string_view auth_session_id, auth_run_state state, std::string failure_code) {
  auto it = runs_.find(auth_session_id);
  if (it == runs_.end()) return {};
  it->second.state = state;
  it->second.failure_code = std::move(failure_code);
  it->second.last_used = now_();
  return it->second.channel_id;
}

bool channel_table::auth_running(std::string_view channel_id) const {
  auto [first, last] = runs_by_channel_.equal_range(channel_id);
  for (auto it = first; it != last; ++it)
    if (runs_.find(it->second)->second.state == auth_run_state::running) return true;
  return false;
}

std::vector<channel> channel_table::routed(std::string_view plugin_id) const {
  std::vector<channel> out;
  for (const auto& [id, c] : channels_)
    if (c.plugin_id == plugin_id && !c.route.expired()) out.push_back(c);
  return out;
}

std::vector<channel> channel_table::begin_verifying(std::string_view plugin_id) {
  std::vector<channel> out;
  for (auto& [id, c] : channels_)
    if (c.plugin_id == plugin_id && c.authenticated && !c.binding_lost()) {  // a lost one waits for a sign-in
      c.verifying = true;
      out.push_back(c);
    }
  return out;
}

std::pair<std::size_t, std::size_t> channel_table::counts(std::string_view plugin_id) const {
  std::pair<std::size_t, std::size_t> out{0, 0};
  for (const auto& [id, c] : channels_) {
    if (c.plugin_id != plugin_id) continue;
    out.first += !c.route.expired();
    out.second += c.authenticated;
  }
  return out;
}

}  // namespace xconn
