// A plugin's config section {"auth","config","route","policy"} checked against a table of {key, rule, field} rows
// instead of an if (key == ...) chain: each row names "group.key", the rule its value must follow and the settings
// field it goes to. The first refusal comes back as "group.key: why"; a message names the key and the rule, never
// the value (a value may be a secret). Header-only; uses Boost.JSON's headers.
//
//   inline const xconn::adapter::config_table<settings> table{
//       {"config.ca_file", config_rule::file_path(), &settings::ca_file},
//       {"policy.lines_per_second", config_rule::integer(1, 20), &settings::lines_per_second},
//   };
//   std::string why = table.check(section, &settings_);   // nullptr to check only
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xconn::adapter {

// The rules a value may follow. Each reads a JSON value into its value_type and answers "" when it is good, else
// why not (the text after "group.key: ").
namespace config_rule {

// A string; empty allowed unless said otherwise.
struct text {
  using value_type = std::string;
  std::string why = "must be a string";
  bool allow_empty = true;
  std::string operator()(const boost::json::value& v, value_type& out) const {
    if (!v.is_string() || (!allow_empty && v.as_string().empty())) return why;
    out = std::string(v.as_string());
    return "";
  }
};
inline text file_path(bool allow_empty = true) { return {"must be a file path", allow_empty}; }

// true or false.
struct flag {
  using value_type = bool;
  std::string operator()(const boost::json::value& v, value_type& out) const {
    if (!v.is_bool()) return "must be true or false";
    out = v.as_bool();
    return "";
  }
};

// An integer in low..high; suffix says more after the rule (e.g. " (the host's own cap)").
struct integer {
  using value_type = std::int64_t;
  std::int64_t low, high;
  std::string suffix;
  integer(std::int64_t low, std::int64_t high, std::string suffix = {}) : low(low), high(high), suffix(std::move(suffix)) {}
  std::string operator()(const boost::json::value& v, value_type& out) const {
    if (!v.is_int64() || v.as_int64() < low || v.as_int64() > high)
      return "must be an integer " + std::to_string(low) + ".." + std::to_string(high) + suffix;
    out = v.as_int64();
    return "";
  }
};

// A string the target's own parser accepts (a URL, a proxy, ...); why says what it must be.
struct matching {
  using value_type = std::string;
  std::function<bool(std::string_view)> accepts;
  std::string why;
  std::string operator()(const boost::json::value& v, value_type& out) const {
    if (!v.is_string() || !accepts(v.as_string())) return why;
    out = std::string(v.as_string());
    return "";
  }
};

// An absolute http:// or https:// URL with a host, and nothing in it a request line could not carry.
inline bool is_http_url(std::string_view s) {
  std::string_view rest;
  if (s.substr(0, 7) == "http://")
    rest = s.substr(7);
  else if (s.substr(0, 8) == "https://")
    rest = s.substr(8);
  else
    return false;
  auto host_end = rest.find_first_of("/?#");
  if (rest.substr(0, host_end).empty()) return false;
  for (unsigned char c : s)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}
inline matching url() { return {is_http_url, "must be an http:// or https:// URL"}; }

// One of a fixed set of strings.
struct one_of {
  using value_type = std::string;
  std::vector<std::string> values;
  one_of(std::initializer_list<std::string> values) : values(values) {}
  std::string operator()(const boost::json::value& v, value_type& out) const {
    for (const auto& allowed : values) {
      if (v.is_string() && v.as_string() == allowed) {
        out = allowed;
        return "";
      }
    }
    std::string why = "must be one of";
    for (std::size_t i = 0; i < values.size(); ++i) why += (i ? ", " : " ") + values[i];
    return why;
  }
};

// A secret string of min_bytes..max_bytes: the refusal says the bounds, never the value or its length.
struct secret {
  using value_type = std::string;
  std::size_t min_bytes = 1, max_bytes = 4096;
  std::string operator()(const boost::json::value& v, value_type& out) const {
    if (!v.is_string() || v.as_string().size() < min_bytes || v.as_string().size() > max_bytes)
      return "must be a secret string of " + std::to_string(min_bytes) + ".." + std::to_string(max_bytes) + " bytes";
    out = std::string(v.as_string());
    return "";
  }
};

}  // namespace config_rule

// One row: the key "group.key", the rule and the field of Settings the value goes to.
template <class Settings>
struct config_row {
  std::string key;
  std::function<std::string(const boost::json::value&, Settings*)> check;

  template <class Rule, class Field>
  config_row(std::string key, Rule rule, Field Settings::*field)
      : key(std::move(key)), check([rule = std::move(rule), field](const boost::json::value& v, Settings* out) {
          typename Rule::value_type value{};
          auto why = rule(v, value);
          if (why.empty() && out) out->*field = static_cast<Field>(std::move(value));
          return why;
        }) {}
};

template <class Settings>
class config_table {
 public:
  config_table(std::initializer_list<config_row<Settings>> rows) : rows_(rows) {}

  // "" when every key is known and good (then the values are in *out, when given), else "group.key: why".
  std::string check(const boost::json::object& section, Settings* out) const {
    for (const auto& group : section) {
      std::string name(group.key());
      if (name != "auth" && name != "config" && name != "route" && name != "policy") return name + ": unknown group";
      if (!group.value().is_object()) return name + ": must be an object";
      for (const auto& entry : group.value().as_object()) {
        std::string key = name + "." + std::string(entry.key());
        const config_row<Settings>* row = find(key);
        if (!row) return key + ": unknown key";
        if (auto why = row->check(entry.value(), out); !why.empty()) return key + ": " + why;
      }
    }
    return "";
  }

  // The same for a section's JSON text; a text that is not a JSON object is "section: must be a JSON object".
  std::string check_text(std::string_view section_json, Settings* out) const {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(section_json, ec);
    if (ec || !v.is_object()) return "section: must be a JSON object";
    return check(v.as_object(), out);
  }

 private:
  const config_row<Settings>* find(const std::string& key) const {
    for (const auto& row : rows_)
      if (row.key == key) return &row;
    return nullptr;
  }
  std::vector<config_row<Settings>> rows_;
};

}  // namespace xconn::adapter
