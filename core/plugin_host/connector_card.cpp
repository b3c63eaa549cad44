#include "core/plugin_host/connector_card.hpp"

#include "core/plugin_host/plugin_manifest.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <regex>
#include <set>

namespace xconn {
namespace json = boost::json;

namespace {

using check = boost::system::result<void, std::string>;

const std::set<std::string, std::less<>> target_types = {"im", "email", "calendar", "ticket", "device"};

// The standard profiles this host can serve, with the target types each allows (spec §11).
const std::map<std::string, std::string, std::less<>> profile_targets = {
    {"xagent.im.v1", "im"}, {"xagent.im.v2", "im"}, {"xagent.device.v1", "device"}};

bool non_empty_string(const json::value* v) { return v && v->is_string() && !v->as_string().empty(); }

check string_array(const json::value* v, const std::string& field, bool non_empty, bool unique,
                   const std::set<std::string, std::less<>>* allowed = nullptr) {
  if (!v || !v->is_array()) return field + ": must be an array of strings";
  const auto& arr = v->as_array();
  if (non_empty && arr.empty()) return field + ": must not be empty";
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    auto at = field + "[" + std::to_string(i) + "]";
    if (!arr[i].is_string() || arr[i].as_string().empty()) return at + ": must be a non-empty string";
    std::string_view s = arr[i].as_string();
    if (allowed && !allowed->count(s)) return at + ": unknown value";
    if (unique && !seen.insert(s).second) return at + ": duplicate";
  }
  return {};
}

check only_keys(const json::object& o, const std::string& where, std::initializer_list<std::string_view> keys) {
  for (const auto& kv : o)
    if (std::find(keys.begin(), keys.end(), kv.key()) == keys.end())
      return (where.empty() ? "" : where + ".") + std::string(kv.key()) + ": unknown field";
  return {};
}

check check_connector(const json::object& card) {
  const auto* c = card.if_contains("connector");
  if (!c || !c->is_object()) return std::string("connector: must be an object");
  const auto& o = c->as_object();
  if (auto r = only_keys(o, "connector", {"name", "version", "vendor", "description"}); !r) return r;
  if (!non_empty_string(o.if_contains("name"))) return std::string("connector.name: required");
  if (!non_empty_string(o.if_contains("version"))) return std::string("connector.version: required");
  for (auto k : {"vendor", "description"})
    if (o.contains(k) && !o.at(k).is_string()) return std::string("connector.") + k + ": must be a string";
  return {};
}

check check_supports(const json::object& card) {
  const auto* s = card.if_contains("supports");
  if (!s || !s->is_object()) return std::string("supports: must be an object");
  const auto& o = s->as_object();
  if (auto r = only_keys(o, "supports", {"user_channel_mode", "target_types", "targets", "profiles"}); !r) return r;
  if (auto* m = o.if_contains("user_channel_mode"); m && !(m->is_string() && (m->as_string() == "single" ||
                                                                                m->as_string() == "multiple")))
    return std::string("supports.user_channel_mode: must be single or multiple");
  if (auto r = string_array(o.if_contains("target_types"), "supports.target_types", true, true, &target_types); !r)
    return r;
  if (auto r = string_array(o.if_contains("profiles"), "supports.profiles", true, true); !r) return r;
  const auto& types = o.at("target_types").as_array();
  const auto& profiles = o.at("profiles").as_array();
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    auto it = profile_targets.find(std::string_view(profiles[i].as_string()));
    auto at = "supports.profiles[" + std::to_string(i) + "]";
    if (it == profile_targets.end()) return at + ": not a profile this host serves";
    if (std::find(types.begin(), types.end(), json::value(it->second)) == types.end())
      return at + ": needs target type " + it->second + " in supports.target_types";
  }
  if (auto* t = o.if_contains("targets")) {
    if (!t->is_array()) return std::string("supports.targets: must be an array");
    for (std::size_t i = 0; i < t->as_array().size(); ++i) {
      auto at = "supports.targets[" + std::to_string(i) + "]";
      const auto& e = t->as_array()[i];
      if (!e.is_object()) return at + ": must be an object";
      const auto& eo = e.as_object();
      if (auto r = only_keys(eo, at, {"target_type", "provider", "label", "description"}); !r) return r;
      auto* tt = eo.if_contains("target_type");
      if (!tt || !tt->is_string() || !target_types.count(std::string_view(tt->as_string())))
        return at + ".target_type: unknown target type";
      if (!non_empty_string(eo.if_contains("provider"))) return at + ".provider: required";
      if (!non_empty_string(eo.if_contains("label"))) return at + ".label: required";
    }
  }
  return {};
}

check check_tools(json::object& card) {
  auto* t = card.if_contains("tools");
  if (!t) return {};
  if (!t->is_array()) return std::string("tools: must be an array");
  const auto& profiles = card.at("supports").as_object().at("profiles").as_array();
  static const std::regex tool_id_pattern("^[A-Za-z0-9_.-]{1,256}$");
  std::set<std::string> seen;
  auto& tools = t->as_array();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    auto at = "tools[" + std::to_string(i) + "]";
    if (!tools[i].is_object()) return at + ": must be an object";
    auto& tool = tools[i].as_object();
    if (auto r = only_keys(tool, at, {"tool_id", "profile", "title", "description", "related_skill_ids",
                                      "input_schema", "output_schema"});
        !r)
      return r;
    auto* id = tool.if_contains("tool_id");
    if (!id || !id->is_string() || !std::regex_match(std::string(id->as_string()), tool_id_pattern))
      return at + ".tool_id: 1-256 ASCII letters, digits, '_', '-', '.'";
    if (!seen.insert(std::string(id->as_string())).second) return at + ".tool_id: duplicate";
    auto* profile = tool.if_contains("profile");
    if (!profile || !profile->is_string() || std::find(profiles.begin(), profiles.end(), *profile) == profiles.end())
      return at + ".profile: must be one of supports.profiles";
    for (auto k : {"title", "description"})
      if (tool.contains(k) && !tool.at(k).is_string()) return at + "." + k + ": must be a string";
    if (tool.contains("related_skill_ids")) {
      if (auto r = string_array(tool.if_contains("related_skill_ids"), at + ".related_skill_ids", false, false); !r)
        return r;
      // The connector serves one skill; a tool can point only at it (spec §4: the names match exactly).
      auto* card_id = card.if_contains("connector_card_id");
      auto skill = card_id && card_id->is_string() ? skill_name_for(card_id->as_string()) : std::string();
      for (const auto& s : tool.at("related_skill_ids").as_array())
        if (s.as_string() != skill) return at + ".related_skill_ids: must name this connector's skill, " + skill;
    }
    if (tool.contains("output_schema") && !tool.at("output_schema").is_object())
      return at + ".output_schema: must be an object";
    auto* in = tool.if_contains("input_schema");
    if (!in || !in->is_object()) return at + ".input_schema: must be an object schema";
    auto& schema = in->as_object();
    if (auto* type = schema.if_contains("type"); !type || *type != "object")
      return at + ".input_schema.type: must be \"object\"";
    if (!schema.contains("properties")) schema["properties"] = json::object();
    if (!schema.contains("required")) schema["required"] = json::array();  // before `props`: an insert may move it
    if (!schema["properties"].is_object()) return at + ".input_schema.properties: must be an object";
    auto& props = schema["properties"].as_object();
    if (props.contains("connector_card_id")) return at + ".input_schema: must not declare connector_card_id";
    if (props.contains("connector_channel_id"))
      return at + ".input_schema: connector_channel_id is injected by the host, do not declare it";
    if (auto r = string_array(&schema["required"], at + ".input_schema.required", false, true); !r) return r;
    for (const auto& name : schema["required"].as_array())
      if (!props.contains(name.as_string())) return at + ".input_schema.required: names an undeclared property";
    // The reserved routing argument (spec §10), injected once here so no plugin writes it by hand.
    props["connector_channel_id"] = {
        {"type", "string"},
        {"description",
         "Target user-level Connector channel ID. Pass the opaque ID returned by connector_channels_list or "
         "inbound source_connector_channel_id unchanged."}};
    schema["required"].as_array().insert(schema["required"].as_array().begin(), "connector_channel_id");
  }
  return {};
}

check check_auth_flows(const json::object& card) {
  auto* f = card.if_contains("auth_flows");
  if (!f) return {};
  if (!f->is_array()) return std::string("auth_flows: must be an array");
  const auto& types = card.at("supports").as_object().at("target_types").as_array();
  std::set<std::string> ids;
  for (std::size_t i = 0; i < f->as_array().size(); ++i) {
    auto at = "auth_flows[" + std::to_string(i) + "]";
    const auto& e = f->as_array()[i];
    if (!e.is_object()) return at + ": must be an object";
    const auto& flow = e.as_object();
    if (auto r = only_keys(flow, at, {"id", "target_type", "type", "title", "description", "fields",
                                      "config_schema", "ui_schema"});
        !r)
      return r;
    if (!non_empty_string(flow.if_contains("id"))) return at + ".id: required";
    if (!ids.insert(std::string(flow.at("id").as_string())).second) return at + ".id: duplicate";
    auto* tt = flow.if_contains("target_type");
    if (!tt || std::find(types.begin(), types.end(), *tt) == types.end())
      return at + ".target_type: must be one of supports.target_types";
    auto* type = flow.if_contains("type");
    if (!type || !(*type == "form" || *type == "qr_login")) return at + ".type: must be form or qr_login";
    if (!non_empty_string(flow.if_contains("title"))) return at + ".title: required";
    auto* fields = flow.if_contains("fields");
    if (*type == "qr_login") {
      if (fields) return at + ".fields: only for form flows";
      continue;
    }
    if (!fields || !fields->is_array() || fields->as_array().empty())
      return at + ".fields: a form flow needs at least one field";
    std::set<std::string> names;
    for (std::size_t j = 0; j < fields->as_array().size(); ++j) {
      auto fat = at + ".fields[" + std::to_string(j) + "]";
      const auto& fe = fields->as_array()[j];
      if (!fe.is_object()) return fat + ": must be an object";
      const auto& field = fe.as_object();
      if (auto r = only_keys(field, fat, {"name", "label", "input_type", "required", "placeholder", "help_text",
                                          "secret", "default_value"});
          !r)
        return r;
      if (!non_empty_string(field.if_contains("name"))) return fat + ".name: required";
      if (!names.insert(std::string(field.at("name").as_string())).second) return fat + ".name: duplicate";
      if (!non_empty_string(field.if_contains("label"))) return fat + ".label: required";
      auto* it = field.if_contains("input_type");
      if (!it || !(*it == "text" || *it == "password")) return fat + ".input_type: must be text or password";
      for (auto k : {"required", "secret"})
        if (field.contains(k) && !field.at(k).is_bool()) return fat + "." + k + ": must be a boolean";
      bool secret = (field.contains("secret") && field.at("secret").as_bool()) || *it == "password";
      if (*it == "password" && !(field.contains("secret") && field.at("secret").as_bool()))
        return fat + ".secret: a password field must set secret true";
      if (secret && field.contains("default_value")) return fat + ".default_value: forbidden for a secret field";
    }
  }
  return {};
}

check check_security(json::object& card) {
  if (!card.contains("security")) card["security"] = json::object();
  if (!card["security"].is_object()) return std::string("security: must be an object");
  auto& s = card["security"].as_object();
  if (auto r = only_keys(s, "security", {"trust_level", "data_classes", "requires_signature", "api_key_required"}); !r)
    return r;
  static const std::set<std::string, std::less<>> levels = {"unknown", "builtin", "verified", "third_party", "local"};
  if (auto* t = s.if_contains("trust_level"); t && !(t->is_string() && levels.count(std::string_view(t->as_string()))))
    return std::string("security.trust_level: unknown value");
  if (s.contains("data_classes"))
    if (auto r = string_array(s.if_contains("data_classes"), "security.data_classes", false, true); !r) return r;
  s["api_key_required"] = true;  // the host always has a key (docs/protocol.md "One server, many connectors")
  return {};
}

}  // namespace

boost::system::result<json::object, std::string> build_card(const json::object& declared, const json::object& build) {
  if (auto r = only_keys(declared, "", {"connector_card_id", "connector", "supports", "tools", "auth_flows", "ui",
                                        "security"});
      !r)
    return r.error();
  static const std::regex card_id_pattern("^[a-z0-9][a-z0-9._-]{0,63}$");
  auto* id = declared.if_contains("connector_card_id");
  if (!id || !id->is_string() || !std::regex_match(std::string(id->as_string()), card_id_pattern))
    return std::string("connector_card_id: 1-64 of a-z 0-9 . _ -");
  json::object card;
  card["schema"] = card_schema;
  card["protocol_version"] = protocol_version;
  card["build"] = build;
  for (const auto& kv : declared) card[kv.key()] = kv.value();
  for (auto step : {check_connector(card), check_supports(card)})
    if (!step) return step.error();
  for (auto* step : {&check_tools, &check_security})
    if (auto r = step(card); !r) return r.error();
  if (auto r = check_auth_flows(card); !r) return r.error();
  if (card.contains("ui") && !card.at("ui").is_object()) return std::string("ui: must be an object");
  return card;
}

}  // namespace xconn
