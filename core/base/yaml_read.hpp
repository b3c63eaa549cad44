// Strict reading of a YAML document for the configuration loader: the hostile-input guards (bytes, anchors,
// aliases, depth, node count, several documents), ${NAME} expansion, typed scalars, and sections whose every
// key is known. Every refusal throws failure, which names the key and line only: a value may be a secret, so it
// is never echoed.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xconn::yaml_read {

inline constexpr std::size_t max_scalar_bytes = 64 * 1024;

// What every reader throws; the loader turns it into a result.
struct failure {
  std::string key;  // printable, bounded
  int line = 0;
  std::string message;
};
[[noreturn]] void fail(const std::string& key, int line, std::string message);

// Keys come from the document: one printable line of bounded size.
std::string printable(std::string_view key);
int line_of(const YAML::Mark& mark);
int line_of(const YAML::Node& node);

// Before any tree exists: refuses control characters and invalid UTF-8 (check_bytes), then anchors, aliases,
// nesting deeper than 32, more than 100000 nodes and a second document (guard_events).
void check_bytes(std::string_view text);
void guard_events(const std::string& text);

// Replaces every ${NAME} with the environment variable NAME; the result is not scanned again.
std::string expand_env(const std::string& text, const std::string& key, int line);

// Calls f(key, key_line, value) for each entry of a map; null counts as an empty map.
void for_each_entry(const YAML::Node& map, const std::string& path, int line,
                    const std::function<void(const std::string&, int, const YAML::Node&)>& f);
std::string scalar(const YAML::Node& value, const std::string& key, int line, const char* expected);
std::int64_t integer(const YAML::Node& value, const std::string& key, int line, std::int64_t lo, std::int64_t hi);
bool boolean(const YAML::Node& value, const std::string& key, int line);
std::vector<std::string> string_list(const YAML::Node& value, const std::string& key, int line);

// A section is a table of key readers; any other key is an error.
using field_reader = std::function<void(const YAML::Node& value, const std::string& key, int line)>;
void read_section(const YAML::Node& node, const std::string& name, int line,
                  const std::vector<std::pair<std::string, field_reader>>& fields);
field_reader bool_field(bool& target);
field_reader non_empty_string_field(std::string& target);
template <class T>
field_reader int_field(T& target, std::int64_t lo, std::int64_t hi) {
  return [&target, lo, hi](const YAML::Node& v, const std::string& key, int line) {
    target = static_cast<T>(integer(v, key, line, lo, hi));
  };
}

}  // namespace xconn::yaml_read
