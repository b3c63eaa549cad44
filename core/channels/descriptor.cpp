#include "core/channels/descriptor.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <set>

namespace xconn {
namespace json = boost::json;

namespace {

constexpr std::array target_types{"im", "email", "calendar", "ticket", "device"};
constexpr std::array connection_statuses{"created", "authenticating", "connected", "degraded",
                                         "offline", "expired", "revoked", "error"};
constexpr std::array tool_statuses{"available", "unavailable", "denied_by_target", "requires_reauth", "not_supported"};
constexpr std::array permission_states{"unknown", "granted", "denied", "requires_reauth"};
constexpr std::array target_keys{"provider", "label", "display_name", "account_hint"};
constexpr std::size_t max_display_chars = 256;

template <std::size_t N>
bool one_of(const std::array<const char*, N>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

const json::object& first_target(const plugin_manifest& m) {
  static const json::object none;
  auto* supports = m.card.at("supports").as_object().if_contains("targets");
  if (!supports || !supports->is_array() || supports->as_array().empty()) return none;
  return supports->as_array().front().as_object();
}

std::string string_or(const json::object& o, std::string_view key, std::string fallback) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : fallback;
}

// The binding's own entry for a tool, or null.
const json::object* binding_tool(const json::object& binding, std::string_view tool_id) {
  auto* tools = binding.if_contains("tools");
  if (!tools || !tools->is_array()) return nullptr;
  for (const auto& t : tools->as_array())
    if (t.is_object() && t.as_object().at("tool_id").as_string() == tool_id) return &t.as_object();
  return nullptr;
}

// The card's tools; a card may leave the key out (a plugin with no tools), which is none.
const json::array& card_tools(const plugin_manifest& m) {
  static const json::array none;
  auto* tools = m.card.if_contains("tools");
  return tools && tools->is_array() ? tools->as_array() : none;
}

std::string tool_profile(const plugin_manifest& m, std::string_view tool_id) {
  for (const auto& t : card_tools(m))
    if (t.as_object().at("tool_id").as_string() == tool_id) return string_or(t.as_object(), "profile", "");
  return "";
}

// How far a connected status is from working, for combining two of them.
int badness(std::string_view status) {
  if (status == "degraded") return 1;
  if (status == "offline") return 2;
  if (status == "error") return 3;
  if (status == "expired" || status == "revoked") return 4;
  return 0;
}

}  // namespace

std::string_view tool_status(const descriptor_input& in, std::string_view tool_id) {
  if (!in.chan.authenticated || in.chan.verifying) return "unavailable";
  auto profile = tool_profile(in.manifest, tool_id);
  if (!profile.empty() && std::find(in.profiles.begin(), in.profiles.end(), profile) == in.profiles.end())
    return "not_supported";
  if (auto* own = binding_tool(in.chan.binding, tool_id)) return own->at("status").as_string();
  // Tools follow a binding the plugin reported lost or down, unless it said otherwise per tool.
  const auto& lost = in.chan.target_status;
  if (lost == "expired" || lost == "revoked") return "requires_reauth";
  if (lost == "offline" || lost == "error") return "unavailable";
  return "available";
}

std::string connection_status(const channel& c, health_state health, bool auth_running) {
  if (c.authenticated && c.verifying) return "authenticating";  // restored, its plugin has not confirmed it yet
  if (c.authenticated) {
    // The worse of the plugin's health and its word on this channel (adapters' shared rules).
    std::string from_health = health == health_state::down       ? "offline"
                              : health == health_state::degraded ? "degraded"
                                                                 : "connected";
    const auto& reported = c.target_status;
    return !reported.empty() && badness(reported) > badness(from_health) ? reported : from_health;
  }
  return auth_running ? "authenticating" : "created";
}

json::object build_descriptor(const descriptor_input& in) {
  const auto& m = in.manifest;
  const auto& target = first_target(m);
  std::string status = connection_status(in.chan, in.health, in.auth_running);
  json::array profiles;
  for (const auto& p : in.profiles) profiles.emplace_back(p);
  std::string label = string_or(target, "label", m.card_id);
  json::object target_out{{"provider", string_or(target, "provider", m.id)}, {"label", label}};
  if (in.chan.authenticated) {
    target_out["display_name"] = string_or(in.chan.binding, "display_name", label);
    if (auto* hint = in.chan.binding.if_contains("account_hint")) target_out["account_hint"] = *hint;
  } else {
    target_out["display_name"] = label + " not bound";
  }
  json::array tools;
  for (const auto& t : card_tools(m)) {
    auto id = t.as_object().at("tool_id").as_string();
    auto st = tool_status(in, id);
    std::string permission = "unknown";
    if (in.chan.authenticated && st != "not_supported") {
      auto* own = binding_tool(in.chan.binding, id);
      auto* p = own ? own->if_contains("target_permission_state") : nullptr;
      permission = p ? std::string(p->as_string()) : in.chan.binding_lost() ? "requires_reauth" : "granted";
    }
    tools.emplace_back(json::object{{"tool_id", id}, {"status", st}, {"target_permission_state", permission}});
  }
  std::string target_type = string_or(target, "target_type", "");
  if (target_type.empty()) {
    auto* types = m.card.at("supports").as_object().if_contains("target_types");
    target_type = types && types->is_array() && !types->as_array().empty() && types->as_array().front().is_string()
                      ? std::string(types->as_array().front().as_string())
                      : "im";
  }
  return json::object{
      {"schema", descriptor_schema},
      {"connection", json::object{{"connector_card_id", m.card_id},
                                  {"connector_id", in.chan.owner},
                                  {"connector_channel_id", in.chan.id},
                                  {"target_type", target_type},
                                  {"profiles", std::move(profiles)},
                                  {"status", status}}},
      {"target", std::move(target_out)},
      {"tools", std::move(tools)},
  };
}

std::string descriptor_violation(const json::object& d, const plugin_manifest& m, std::string_view channel_id) {
  auto str = [](const json::object& o, std::string_view k) -> std::string_view {
    auto* v = o.if_contains(k);
    return v && v->is_string() ? std::string_view(v->as_string()) : std::string_view();
  };
  if (str(d, "schema") != descriptor_schema) return "schema must be xagent.connection/v2";
  auto* conn = d.if_contains("connection");
  if (!conn || !conn->is_object()) return "connection is required";
  const auto& c = conn->as_object();
  if (str(c, "connector_card_id") != m.card_id) return "connection.connector_card_id is not the card's";
  if (str(c, "connector_id").empty()) return "connection.connector_id is required";
  if (str(c, "connector_channel_id") != channel_id) return "connection.connector_channel_id is not the channel";
  if (!one_of(target_types, str(c, "target_type"))) return "connection.target_type is not a known type";
  if (!one_of(connection_statuses, str(c, "status"))) return "connection.status is not a known status";
  auto* profiles = c.if_contains("profiles");
  if (!profiles || !profiles->is_array() || profiles->as_array().empty()) return "connection.profiles must be non-empty";
  const auto& card_profiles = m.card.at("supports").as_object().at("profiles").as_array();
  std::set<std::string_view> seen;
  for (const auto& p : profiles->as_array()) {
    if (!p.is_string() || !seen.insert(p.as_string()).second) return "connection.profiles must be unique strings";
    if (std::find(card_profiles.begin(), card_profiles.end(), p) == card_profiles.end())
      return "connection.profiles holds a profile the card does not declare";
  }
  auto* target = d.if_contains("target");
  if (!target || !target->is_object() || str(target->as_object(), "provider").empty()) return "target.provider is required";
  for (const auto& kv : target->as_object()) {
    if (!one_of(target_keys, kv.key())) return "target holds more than display-level fields";
    if (!kv.value().is_string()) return "target fields must be strings";
  }
  if (str(target->as_object(), "display_name").empty()) return "target.display_name is required";
  if (auto* tools = d.if_contains("tools")) {
    if (!tools->is_array()) return "tools must be an array";
    for (const auto& t : tools->as_array()) {
      if (!t.is_object() || str(t.as_object(), "tool_id").empty()) return "tools[].tool_id is required";
      if (!m.tools.contains(std::string(str(t.as_object(), "tool_id")))) return "tools[] names a tool not in the card";
      if (!one_of(tool_statuses, str(t.as_object(), "status"))) return "tools[].status is not a known status";
      if (auto* perm = t.as_object().if_contains("target_permission_state");
          perm && (!perm->is_string() || !one_of(permission_states, perm->as_string())))
        return "tools[].target_permission_state is not a known state";
    }
  }
  return "";
}

std::string binding_violation(const json::object& binding, const plugin_manifest& m) {
  for (const auto& kv : binding) {
    if (kv.key() == "display_name" || kv.key() == "account_hint") {
      if (!kv.value().is_string() || kv.value().as_string().empty() || kv.value().as_string().size() > max_display_chars)
        return "binding." + std::string(kv.key()) + " must be a string of 1-256 bytes";
    } else if (kv.key() == "tools") {
      if (!kv.value().is_array()) return "binding.tools must be an array";
      for (const auto& t : kv.value().as_array()) {
        auto* o = t.if_object();
        auto* id = o ? o->if_contains("tool_id") : nullptr;
        auto* st = o ? o->if_contains("status") : nullptr;
        auto* perm = o ? o->if_contains("target_permission_state") : nullptr;
        if (!id || !id->is_string() || !m.tools.contains(std::string(id->as_string())))
          return "binding.tools[].tool_id must name a card tool";
        if (!st || !st->is_string() || !one_of(tool_statuses, st->as_string()))
          return "binding.tools[].status must be a descriptor tool status";
        if (perm && (!perm->is_string() || !one_of(permission_states, perm->as_string())))
          return "binding.tools[].target_permission_state must be a descriptor permission state";
      }
    } else {
      return "binding." + std::string(kv.key()) + ": unknown key";
    }
  }
  return "";
}

}  // namespace xconn
