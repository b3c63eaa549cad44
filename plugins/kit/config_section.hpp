// A plugin's config section {"auth","config","route","policy"} walked key by key (docs/plugin-contract.md): on_key gets
// "group.key" and the value and answers nullopt for a key it does not know, "" when the value is good, else why
// not. The first refusal is returned as "group.key: why"; a message names the key, never a value.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace xconn::kit {

using key_check = std::function<std::optional<std::string>(const std::string& key, const boost::json::value& v)>;

inline std::string check_section(const boost::json::object& section, const key_check& on_key) {
  for (const auto& group : section) {
    std::string name(group.key());
    if (name != "auth" && name != "config" && name != "route" && name != "policy") return name + ": unknown group";
    if (!group.value().is_object()) return name + ": must be an object";
    for (const auto& entry : group.value().as_object()) {
      std::string key = name + "." + std::string(entry.key());
      auto why = on_key(key, entry.value());
      if (!why) return key + ": unknown key";
      if (!why->empty()) return key + ": " + *why;
    }
  }
  return "";
}

// For on_key: "" when v is an integer in low..high (then stored in *out, when given), else the rule.
template <class Int>
std::string integer_in(const boost::json::value& v, std::int64_t low, std::int64_t high, Int* out) {
  if (!v.is_int64() || v.as_int64() < low || v.as_int64() > high)
    return "must be an integer " + std::to_string(low) + ".." + std::to_string(high);
  if (out) *out = static_cast<Int>(v.as_int64());
  return "";
}

}  // namespace xconn::kit
