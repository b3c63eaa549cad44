#include "core/plugin_host/plugin_manifest.hpp"

#include "core/plugin_host/connector_card.hpp"
#include "core/plugin_host/served_skill.hpp"

#include <boost/json.hpp>

#include <regex>

namespace xconn {
namespace json = boost::json;

namespace {

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

boost::system::result<json::object, std::string> parse_object(std::string_view text, const std::string& what) {
  json::parse_options opts;
  opts.max_depth = 64;
  boost::system::error_code ec;
  auto v = json::parse(text, ec, {}, opts);
  if (ec || !v.is_object()) return what + ": not a JSON object";
  return std::move(v.as_object());
}

// chat_limits is an aggregate, so a string would convert to it: say which side is meant.
using chat_result = boost::system::result<std::optional<chat_limits>, std::string>;
chat_result chat_failed(std::string why) { return chat_result(boost::system::in_place_error, std::move(why)); }

chat_result parse_chat(const json::value* v) {
  if (!v || v->is_null()) return chat_result(boost::system::in_place_value);
  if (!v->is_object()) return chat_failed(std::string("chat: must be an object"));
  const auto& o = v->as_object();
  chat_limits chat;
  for (const auto& kv : o)
    if (kv.key() != "title" && kv.key() != "roles" && kv.key() != "max_length" && kv.key() != "length_unit" &&
        kv.key() != "max_per_minute")
      return chat_failed("chat." + std::string(kv.key()) + ": unknown field");
  auto* title = o.if_contains("title");
  if (!title || !title->is_string() || code_points(title->as_string()) < 1 || code_points(title->as_string()) > 80)
    return chat_failed(std::string("chat.title: 1-80 characters"));
  chat.title = title->as_string();
  if (auto* roles = o.if_contains("roles")) {
    static const std::regex role_id("^[a-z][a-z0-9_-]{0,31}$");
    if (!roles->is_object() || roles->as_object().size() > 16) return chat_failed(std::string("chat.roles: at most 16 roles"));
    for (const auto& r : roles->as_object()) {
      if (!std::regex_match(std::string(r.key()), role_id)) return chat_failed("chat.roles." + std::string(r.key()) + ": lowercase id");
      if (!r.value().is_string() || code_points(r.value().as_string()) < 1 || code_points(r.value().as_string()) > 24)
        return chat_failed("chat.roles." + std::string(r.key()) + ": label of 1-24 characters");
      chat.roles[std::string(r.key())] = r.value().as_string();
    }
  }
  auto int_in = [&](const char* key, int lo, int hi, int& out) -> boost::system::result<void, std::string> {
    if (auto* x = o.if_contains(key)) {
      if (!x->is_int64() || x->as_int64() < lo || x->as_int64() > hi)
        return "chat." + std::string(key) + ": integer " + std::to_string(lo) + "-" + std::to_string(hi);
      out = static_cast<int>(x->as_int64());
    }
    return {};
  };
  if (auto* unit = o.if_contains("length_unit")) {
    auto named = unit->is_string() ? length_unit_named(unit->as_string()) : std::nullopt;
    if (!named) return chat_failed(std::string("chat.length_unit: characters, bytes or utf16_units"));
    chat.unit = *named;
  }
  // Seed 002's 1-4000 code points; a byte or UTF-16 limit up to 64 KiB (Telegram's is 4,096 UTF-16 units).
  int longest = chat.unit == length_unit::characters ? 4000 : 65536;
  if (auto r = int_in("max_length", 1, longest, chat.max_length); !r)
    return chat_failed(r.error() + " " + std::string(spoken(chat.unit)));
  // 0: the plugin paces its target itself, so the host counts nothing (older manifests could not say 0).
  if (auto r = int_in("max_per_minute", 0, 30, chat.max_per_minute); !r)
    return chat_failed(r.error() + " (0: the plugin paces its target itself)");
  return chat_result(boost::system::in_place_value, std::move(chat));
}

}  // namespace

std::string target_provider(const plugin_manifest& m) {
  if (auto* supports = m.card.if_contains("supports"); supports && supports->is_object())
    if (auto* targets = supports->as_object().if_contains("targets"); targets && targets->is_array())
      for (const auto& t : targets->as_array())
        if (auto* p = t.as_object().if_contains("provider"); p && p->is_string()) return std::string(p->as_string());
  return m.id;
}

bool valid_plugin_id(std::string_view id) {
  if (id.empty() || id.size() > 32) return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

std::string skill_name_for(std::string_view card_id) {
  std::string name = "connector-";
  for (char c : card_id) name.push_back(c == '.' || c == '_' ? '-' : c);
  return name;
}

namespace {

// tool_options: per tool of the card, side_effect, timeout_ms and non_blocking. "" when valid.
std::string read_tool_options(const json::object& doc, plugin_manifest& m) {
  if (auto* opts = doc.if_contains("tool_options")) {
    if (!opts->is_object()) return "tool_options: must be an object";
    for (const auto& kv : opts->as_object()) {
      auto at = "tool_options." + std::string(kv.key());
      auto it = m.tools.find(std::string(kv.key()));
      if (it == m.tools.end()) return at + ": not a tool of the card";
      if (!kv.value().is_object()) return at + ": must be an object";
      for (const auto& o : kv.value().as_object()) {
        if (o.key() == "side_effect" && o.value().is_bool()) {
          it->second.side_effect = o.value().as_bool();
        } else if (o.key() == "non_blocking" && o.value().is_bool()) {
          it->second.non_blocking = o.value().as_bool();
        } else if (o.key() == "timeout_ms" && o.value().is_int64() && o.value().as_int64() > 0 &&
                   o.value().as_int64() <= 3600000) {
          it->second.timeout_ms = static_cast<int>(o.value().as_int64());
        } else {
          return at + "." + std::string(o.key()) + ": side_effect (bool), non_blocking (bool) or timeout_ms (1-3600000) only";
        }
      }
    }
  }
  return {};
}

// capability: the AIOS adapter capability, without its live health. "" when valid.
std::string read_capability(const json::object& doc, plugin_manifest& m) {
  auto* cap = doc.if_contains("capability");
  if (!cap || !cap->is_object()) return "capability: must be an object";
  m.capability = cap->as_object();
  for (auto key : {"adapter_id", "adapter_version"})
    if (auto* v = m.capability.if_contains(key); !v || !v->is_string() || v->as_string().empty())
      return "capability." + std::string(key) + ": required";
  for (auto key : {"supported_targets", "supported_features"}) {
    auto* v = m.capability.if_contains(key);
    if (!v || !v->is_array()) return "capability." + std::string(key) + ": must be an array of strings";
    for (const auto& e : v->as_array())
      if (!e.is_string()) return "capability." + std::string(key) + ": must be an array of strings";
  }
  m.capability.erase("health");  // live, added by the host when served
  return {};
}

// delivery: what the target can do with a reply (edit, typing, split). "" when valid.
std::string read_delivery(const json::object& doc, plugin_manifest& m) {
  if (auto* v = doc.if_contains("delivery")) {
    if (!v->is_object()) return "delivery: must be an object";
    for (const auto& kv : v->as_object()) {
      bool* flag = kv.key() == "can_edit"    ? &m.delivery.can_edit
                   : kv.key() == "typing"    ? &m.delivery.typing
                   : kv.key() == "can_split" ? &m.delivery.can_split
                                             : nullptr;
      if (!flag) return "delivery." + std::string(kv.key()) + ": unknown field";
      if (!kv.value().is_bool()) return "delivery." + std::string(kv.key()) + ": must be a boolean";
      *flag = kv.value().as_bool();
    }
  }
  return {};
}

// http_routes: the routes the plugin serves under its base path, none of the host's. "" when valid.
std::string read_http_routes(const json::object& doc, plugin_manifest& m) {
  if (auto* v = doc.if_contains("http_routes")) {
    static const std::regex route_path(R"(^(/[a-z0-9_-]{1,64}){1,8}(/\{[a-z_]{1,32}\})?$)");
    if (!v->is_array() || v->as_array().size() > 32) return "http_routes: at most 32 routes";
    for (const auto& r : v->as_array()) {
      auto at = "http_routes[" + std::to_string(m.http_routes.size()) + "]";
      if (!r.is_object()) return at + ": must be an object";
      http_route route;
      for (const auto& kv : r.as_object()) {
        if (kv.key() == "path" && kv.value().is_string()) {
          route.path = kv.value().as_string();
        } else if (kv.key() == "method" && kv.value().is_string()) {
          route.method = kv.value().as_string();
        } else if (kv.key() == "public" && kv.value().is_bool()) {
          route.is_public = kv.value().as_bool();
        } else {
          return at + "." + std::string(kv.key()) + ": path (string), method (string) or public (bool)";
        }
      }
      if (!std::regex_match(route.path, route_path))
        return at + ".path: /segments of a-z 0-9 _ -, the last one may be a {param}";
      // The spec's own endpoints stay the host's.
      for (std::string_view reserved : {"/connector-card.json", "/skill.md", "/capability.json", "/health", "/ws",
                                        "/files", "/events", "/reload", "/metrics"})
        if (route.path == reserved || route.path.starts_with(std::string(reserved) + "/"))
          return at + ".path: " + std::string(reserved) + " belongs to the host";
      if (route.method != "GET" && route.method != "POST" && route.method != "PUT" && route.method != "DELETE")
        return at + ".method: GET, POST, PUT or DELETE";
      for (const auto& earlier : m.http_routes)
        if (earlier.method == route.method && earlier.path == route.path) return at + ": declared twice";
      m.http_routes.push_back(std::move(route));
    }
  }
  return {};
}

}  // namespace

// plugin_manifest is an aggregate, so a string would convert to it: say which side is meant.
using manifest_result = boost::system::result<plugin_manifest, std::string>;
static manifest_result manifest_failed(std::string why) {
  return manifest_result(boost::system::in_place_error, std::move(why));
}

boost::system::result<plugin_manifest, std::string> parse_manifest(std::string_view manifest_json,
                                                                   std::string_view build_json) {
  auto doc = parse_object(manifest_json, "manifest");
  if (!doc) return manifest_failed(doc.error());
  auto build = parse_object(build_json, "build");
  if (!build) return manifest_failed(build.error());
  for (const auto& kv : *doc)
    if (kv.key() != "id" && kv.key() != "card" && kv.key() != "tool_options" && kv.key() != "skill" &&
        kv.key() != "system_prompt" && kv.key() != "chat" && kv.key() != "capability" && kv.key() != "delivery" &&
        kv.key() != "http_routes")
      return manifest_failed(std::string(kv.key()) + ": unknown field");
  if (!build->contains("build_time") || !build->at("build_time").is_string())
    return manifest_failed(std::string("build.build_time: required"));
  for (const auto& kv : *build)
    if (!kv.value().is_string()) return manifest_failed("build." + std::string(kv.key()) + ": must be a string");

  plugin_manifest m;
  auto* id = doc->if_contains("id");
  if (!id || !id->is_string() || !valid_plugin_id(id->as_string())) return manifest_failed(std::string("id: 1-32 of a-z 0-9 -"));
  m.id = id->as_string();
  m.build = std::move(*build);

  auto* card = doc->if_contains("card");
  if (!card || !card->is_object()) return manifest_failed(std::string("card: must be an object"));
  auto built = build_card(card->as_object(), m.build);
  if (!built) return manifest_failed("card." + built.error());
  m.card = std::move(*built);
  m.card_id = m.card.at("connector_card_id").as_string();
  m.card_version = m.card.at("connector").as_object().at("version").as_string();

  if (auto* tools = m.card.if_contains("tools"))
    for (const auto& t : tools->as_array()) m.tools[std::string(t.as_object().at("tool_id").as_string())] = {};
  if (auto e = read_tool_options(*doc, m); !e.empty()) return manifest_failed(std::move(e));

  for (auto key : {"skill", "system_prompt"})
    if (auto* v = doc->if_contains(key); v && !v->is_string()) return manifest_failed(std::string(key) + ": must be a string");
  if (auto* v = doc->if_contains("system_prompt")) m.system_prompt = v->as_string();
  if (code_points(m.system_prompt) > 4000) return manifest_failed(std::string("system_prompt: at most 4000 characters"));
  auto chat = parse_chat(doc->if_contains("chat"));
  if (!chat) return manifest_failed(chat.error());
  m.chat = std::move(*chat);
  std::string skill;
  if (auto* v = doc->if_contains("skill")) skill = v->as_string();
  // The skill states the reply limits, and whether the plugin splits is part of them.
  if (auto e = read_delivery(*doc, m); !e.empty()) return manifest_failed(std::move(e));
  auto composed = compose_skill(m, std::move(skill));
  if (!composed) return manifest_failed(composed.error());
  m.skill = std::move(*composed);

  if (auto e = read_capability(*doc, m); !e.empty()) return manifest_failed(std::move(e));
  if (auto e = read_http_routes(*doc, m); !e.empty()) return manifest_failed(std::move(e));
  return m;
}

namespace {

// Whether path fits a route ending in "/{param}"; the segment's value in *param.
bool param_route_matches(std::string_view route, std::string_view path, std::string* param) {
  if (!route.ends_with('}')) return false;
  auto prefix = route.substr(0, route.rfind('/') + 1);  // "/in/"
  if (!path.starts_with(prefix)) return false;
  auto value = path.substr(prefix.size());
  static const std::regex segment("^[A-Za-z0-9_.~-]{1,128}$");
  if (!std::regex_match(value.begin(), value.end(), segment)) return false;
  if (param) *param = value;
  return true;
}

}  // namespace

const http_route* plugin_manifest::find_route(std::string_view method, std::string_view path,
                                              std::string* param) const {
  for (const auto& r : http_routes)
    if (r.method == method && r.path == path && !r.path.ends_with('}')) return &r;
  for (const auto& r : http_routes)
    if (r.method == method && param_route_matches(r.path, path, param)) return &r;
  return nullptr;
}

bool plugin_manifest::has_route_path(std::string_view path) const {
  for (const auto& r : http_routes)
    if ((r.path == path && !r.path.ends_with('}')) || param_route_matches(r.path, path, nullptr)) return true;
  return false;
}

}  // namespace xconn
