// Strict loading of the host configuration (conf/xconnd.yaml).
//
// Bounds (inclusive). Durations are integer seconds, sizes integer bytes.
//   server.io_threads                      0 .. 256          (0: one per core)
//   server.heartbeat_s                     1 .. 3600
//   server.hello_timeout_s                 1 .. 3600
//   server.max_frame_bytes                 1024 .. 67108864  (1 KiB .. 64 MiB)
//   server.max_outbox_bytes                65536 .. 1073741824 (64 KiB .. 1 GiB)
//   server.max_connections                 1 .. 1000000
//   server.max_public_body_bytes           1048576 .. 1073741824 (1 MiB .. 1 GiB; at least one public body)
//   server.api_keys[i]                     >= 16 chars, no whitespace or control characters
//   store.map_size_bytes                   1048576 .. 1099511627776 (1 MiB .. 1 TiB)
//   plugins.allow                          at most 16 distinct ids, each ^[a-z0-9-]{1,32}$
//   plugins.threads                        1 .. 64
//   plugins.inline_budget_us               0 .. 100000       (0: no tool runs on an I/O thread)
//   plugins.reload_pause_max_calls         0 .. 1000000      (0: fail calls at once during a swap)
//   plugins.reload_pause_max_s             1 .. 600
//   plugins.kv_quota_bytes                 65536 .. 1073741824 (64 KiB .. 1 GiB)
//   leases.connector_offline_s             1 .. 2592000      (30 days)
//   leases.unauthenticated_channel_s       1 .. 86400
//   leases.max_temporary_per_connector_id  1 .. 1000000
//   leases.max_temporary_per_connector     1 .. 10000000
//   delivery.window                        1 .. 1024
//   delivery.ack_timeout_s                 1 .. 3600
//   delivery.retry_max_s                   1 .. 86400, and >= delivery.ack_timeout_s
//   delivery.send_timeout_s                1 .. 3600
//   delivery.expiry_s                      1 .. 2592000
//   delivery.max_pending_per_channel       1 .. 1000000
//   delivery.delta_ttl_s                   1 .. 86400
//   delivery.max_open_deltas_per_channel   1 .. 4096
//   delivery.completed_ids_s               1 .. 2592000
//   tools.timeout_s                        1 .. 3600
//   tools.idempotency_s                    1 .. 2592000
//   files.max_bytes                        1 .. 1099511627776
//   files.ttl_s                            1 .. 31536000     (365 days)
//   files.url_ttl_s                        1 .. 2592000
//   files.upload_min_bytes_per_s           1 .. 1073741824
//   files.upload_grace_s                   1 .. 3600
//   log.format                             text | json
//   log.level                              trace | debug | info | warn | error
//   log.file                               a path without control characters ("": stderr); its folder must exist
//                                          (checked when the log is set up, log::configure)
// Hostile input: documents over 1 MiB, scalars over 64 KiB, nesting deeper than 32, more than 100000 nodes,
// anchors/aliases, several documents, control characters and invalid UTF-8 are refused.
//
// Error messages name the key and line only: a value may be a secret, so it is never echoed.
#include "core/base/config.hpp"
#include "core/base/yaml_read.hpp"

#include <arpa/inet.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace xconn {
namespace {

using namespace yaml_read;

constexpr std::size_t max_document_bytes = 1024 * 1024;
constexpr std::size_t max_allow = 16;
constexpr std::size_t min_api_key_chars = 16;

bool valid_id(std::string_view id) {
  return !id.empty() && id.size() <= 32 &&
         std::all_of(id.begin(), id.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

bool valid_listen(std::string_view s) {
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = s.substr(0, colon), port = s.substr(colon + 1);
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  if (std::stoi(std::string(port)) > 65535) return false;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    std::string inner(host.substr(1, host.size() - 2));
    in6_addr addr{};
    return inet_pton(AF_INET6, inner.c_str(), &addr) == 1;
  }
  return !host.empty() && host.size() <= 253 && std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
  });
}

bool valid_base_url(std::string_view s) {
  if (s.empty()) return true;
  std::string_view rest;
  if (s.starts_with("http://")) rest = s.substr(7);
  else if (s.starts_with("https://")) rest = s.substr(8);
  else return false;
  if (rest.empty() || rest.front() == '/') return false;  // no host
  return std::none_of(rest.begin(), rest.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return c == '?' || c == '#' || u <= 0x20 || u == 0x7f;
  });
}

void read_server(const YAML::Node& node, int line, server_config& c) {
  read_section(node, "server", line, {
    {"listen", [&](const YAML::Node& v, const std::string& key, int l) {
       c.listen = scalar(v, key, l, "a string");
       if (!valid_listen(c.listen)) fail(key, l, "expected HOST:PORT (port 0-65535, IPv6 as [ADDR]:PORT)");
     }},
    {"public_base_url", [&](const YAML::Node& v, const std::string& key, int l) {
       c.public_base_url = scalar(v, key, l, "a string");
       if (!valid_base_url(c.public_base_url)) fail(key, l, "expected empty or an http(s):// URL without query or fragment");
     }},
    {"api_keys", [&](const YAML::Node& v, const std::string& key, int l) {
       c.api_keys = string_list(v, key, l);
       for (std::size_t i = 0; i < c.api_keys.size(); ++i) {
         const auto& k = c.api_keys[i];
         std::string item_key = key + "[" + std::to_string(i) + "]";
         int item_line = line_of(v[i]);
         if (k.size() < min_api_key_chars) fail(item_key, item_line, "api key must be at least 16 characters");
         if (std::any_of(k.begin(), k.end(), [](char ch) { return static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f; }))
           fail(item_key, item_line, "api key must not contain whitespace or control characters");
       }
     }},
    {"io_threads", int_field(c.io_threads, 0, 256)},
    {"heartbeat_s", int_field(c.heartbeat_s, 1, 3600)},
    {"hello_timeout_s", int_field(c.hello_timeout_s, 1, 3600)},
    {"max_frame_bytes", int_field(c.max_frame_bytes, 1024, 67108864)},
    {"max_outbox_bytes", int_field(c.max_outbox_bytes, 65536, 1073741824)},
    {"max_connections", int_field(c.max_connections, 1, 1000000)},
    {"max_public_body_bytes", int_field(c.max_public_body_bytes, 1048576, 1073741824)},
  });
  // Download URLs name the host; a wildcard address names none a client could reach.
  auto host = c.listen.substr(0, c.listen.rfind(':'));
  if (c.public_base_url.empty() && (host == "0.0.0.0" || host == "[::]"))
    fail("server.public_base_url", line,
         "required when server.listen is a wildcard address (" + host + "): the URLs handed out must name this host");
}

void read_store(const YAML::Node& node, int line, store_config& c) {
  read_section(node, "store", line, {
    {"path", non_empty_string_field(c.path)},
    {"map_size_bytes", int_field(c.map_size_bytes, 1048576, 1099511627776ll)},
    {"sealing_key_file", non_empty_string_field(c.sealing_key_file)},
  });
}

void read_plugins(const YAML::Node& node, int line, plugins_config& c) {
  read_section(node, "plugins", line, {
    {"dir", non_empty_string_field(c.dir)},
    {"watch", bool_field(c.watch)},
    {"allow", [&](const YAML::Node& v, const std::string& key, int l) {
       c.allow = string_list(v, key, l);
       if (c.allow.size() > max_allow) fail(key, l, "at most 16 plugin ids");
       std::set<std::string> seen;
       for (std::size_t i = 0; i < c.allow.size(); ++i) {
         std::string item_key = key + "[" + std::to_string(i) + "]";
         if (!valid_id(c.allow[i])) fail(item_key, line_of(v[i]), "plugin id must match [a-z0-9-]{1,32}");
         if (!seen.insert(c.allow[i]).second) fail(item_key, line_of(v[i]), "duplicate plugin id");
       }
     }},
    {"threads", int_field(c.threads, 1, 64)},
    {"inline_budget_us", int_field(c.inline_budget_us, 0, 100000)},
    {"reload_pause_max_calls", int_field(c.reload_pause_max_calls, 0, 1000000)},
    {"reload_pause_max_s", int_field(c.reload_pause_max_s, 1, 600)},
    {"kv_quota_bytes", int_field(c.kv_quota_bytes, 65536, 1073741824)},
  });
}

void read_leases(const YAML::Node& node, int line, leases_config& c) {
  read_section(node, "leases", line, {
    {"connector_offline_s", int_field(c.connector_offline_s, 1, 2592000)},
    {"unauthenticated_channel_s", int_field(c.unauthenticated_channel_s, 1, 86400)},
    {"max_temporary_per_connector_id", int_field(c.max_temporary_per_connector_id, 1, 1000000)},
    {"max_temporary_per_connector", int_field(c.max_temporary_per_connector, 1, 10000000)},
  });
}

void read_delivery(const YAML::Node& node, int line, delivery_config& c) {
  int ack_line = 0, retry_line = 0;
  auto with_line = [](field_reader r, int& where) {
    return [r, &where](const YAML::Node& v, const std::string& key, int l) { where = l; r(v, key, l); };
  };
  read_section(node, "delivery", line, {
    {"window", int_field(c.window, 1, 1024)},
    {"ack_timeout_s", with_line(int_field(c.ack_timeout_s, 1, 3600), ack_line)},
    {"retry_max_s", with_line(int_field(c.retry_max_s, 1, 86400), retry_line)},
    {"send_timeout_s", int_field(c.send_timeout_s, 1, 3600)},
    {"expiry_s", int_field(c.expiry_s, 1, 2592000)},
    {"max_pending_per_channel", int_field(c.max_pending_per_channel, 1, 1000000)},
    {"delta_ttl_s", int_field(c.delta_ttl_s, 1, 86400)},
    {"max_open_deltas_per_channel", int_field(c.max_open_deltas_per_channel, 1, 4096)},
    {"completed_ids_s", int_field(c.completed_ids_s, 1, 2592000)},
    {"context_in_text", bool_field(c.context_in_text)},
  });
  // Redelivery doubles from ack_timeout_s up to retry_max_s, so the cap cannot sit below the start.
  if (c.retry_max_s < c.ack_timeout_s) {
    if (retry_line) fail("delivery.retry_max_s", retry_line, "must not be less than delivery.ack_timeout_s");
    fail("delivery.ack_timeout_s", ack_line, "must not be more than delivery.retry_max_s");
  }
}

void read_tools(const YAML::Node& node, int line, tools_config& c) {
  read_section(node, "tools", line, {
    {"timeout_s", int_field(c.timeout_s, 1, 3600)},
    {"idempotency_s", int_field(c.idempotency_s, 1, 2592000)},
  });
}

void read_files(const YAML::Node& node, int line, files_config& c) {
  read_section(node, "files", line, {
    {"max_bytes", int_field(c.max_bytes, 1, 1099511627776ll)},
    {"ttl_s", int_field(c.ttl_s, 1, 31536000)},
    {"url_ttl_s", int_field(c.url_ttl_s, 1, 2592000)},
    {"upload_min_bytes_per_s", int_field(c.upload_min_bytes_per_s, 1, 1073741824)},
    {"upload_grace_s", int_field(c.upload_grace_s, 1, 3600)},
  });
}

// A string that must be one of a few words; the message lists them, never the value.
field_reader one_of_field(std::string& target, std::initializer_list<std::string_view> words) {
  std::vector<std::string> allowed(words.begin(), words.end());
  return [&target, allowed](const YAML::Node& v, const std::string& key, int line) {
    std::string text = scalar(v, key, line, "a string");
    if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
      std::string list;
      for (std::size_t i = 0; i < allowed.size(); ++i)
        list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
      fail(key, line, "expected " + list);
    }
    target = std::move(text);
  };
}

void read_log(const YAML::Node& node, int line, log_config& c) {
  read_section(node, "log", line, {
    {"format", one_of_field(c.format, {"text", "json"})},
    {"file", [&](const YAML::Node& v, const std::string& key, int l) {
       c.file = scalar(v, key, l, "a string");
       if (std::any_of(c.file.begin(), c.file.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
         fail(key, l, "a path must not contain control characters");
     }},
    {"level", one_of_field(c.level, {"trace", "debug", "info", "warn", "error"})},
  });
}

// YAML core schema for a plain (untagged) scalar: null, bool, int, float, else string. JSON has no
// infinity or NaN, so .inf/.nan (and floats out of double range) stay strings.
boost::json::value resolve_plain(const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  const char* b = text.data();
  const char* e = b + text.size();
  std::int64_t i = 0;
  if (text.starts_with("0x") || text.starts_with("0o")) {
    auto [end, ec] = std::from_chars(b + 2, e, i, text[1] == 'x' ? 16 : 8);
    if (ec == std::errc() && end == e && text.size() > 2) return i;
    return boost::json::string(text);
  }
  const char* digits = (*b == '+') ? b + 1 : b;  // from_chars does not take '+'
  if (auto [end, ec] = std::from_chars(digits, e, i); ec == std::errc() && end == e && digits != e) return i;
  // Core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
  std::size_t p = (text[0] == '-' || text[0] == '+') ? 1 : 0, int_digits = 0, frac_digits = 0;
  while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) ++p, ++int_digits;
  if (p < text.size() && text[p] == '.') {
    ++p;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) ++p, ++frac_digits;
  }
  bool ok = int_digits + frac_digits > 0;
  if (ok && p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
    ++p;
    if (p < text.size() && (text[p] == '-' || text[p] == '+')) ++p;
    std::size_t exp_digits = 0;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) ++p, ++exp_digits;
    ok = exp_digits > 0;
  }
  if (ok && p == text.size()) {
    double d = 0;
    auto [end, ec] = std::from_chars(digits, e, d);
    if (ec == std::errc() && end == e) return d;
  }
  return boost::json::string(text);
}

// Converts a connector group's YAML to JSON, recording the line of every key (and sequence item) by path.
boost::json::value to_json_value(const YAML::Node& node, const std::string& path, int line, const std::string& error_prefix,
                                 connector_section& section) {
  if (node.IsMap()) {
    boost::json::object obj;
    for_each_entry(node, error_prefix + path, line, [&](const std::string& key, int key_line, const YAML::Node& value) {
      std::string child = path + "." + key;
      section.key_lines[child] = key_line;
      obj[key] = to_json_value(value, child, key_line, error_prefix, section);
    });
    return obj;
  }
  if (node.IsSequence()) {
    boost::json::array arr;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const YAML::Node item = node[i];
      std::string child = path + "[" + std::to_string(i) + "]";
      section.key_lines[child] = line_of(item);
      arr.push_back(to_json_value(item, child, line_of(item), error_prefix, section));
    }
    return arr;
  }
  if (node.IsScalar()) {
    std::string text = expand_env(node.Scalar(), error_prefix + path, line);
    if (node.Tag() == "?") return resolve_plain(text);
    return boost::json::string(text);  // quoted or explicitly tagged: a string
  }
  return nullptr;
}

void read_connectors(const YAML::Node& node, int line, std::map<std::string, connector_section>& out) {
  for_each_entry(node, "connectors", line, [&](const std::string& id, int id_line, const YAML::Node& value) {
    std::string base = "connectors." + id;
    if (!valid_id(id)) fail(base, id_line, "connector id must match [a-z0-9-]{1,32}");
    connector_section section;
    section.line = id_line;
    for_each_entry(value, base, id_line, [&](const std::string& group, int group_line, const YAML::Node& body) {
      boost::json::object* target = group == "auth"     ? &section.auth
                                    : group == "config" ? &section.config
                                    : group == "route"  ? &section.route
                                    : group == "policy" ? &section.policy
                                                        : nullptr;
      if (!target) fail(base + "." + group, group_line, "unknown group (expected auth, config, route or policy)");
      if (!body.IsMap() && !body.IsNull()) fail(base + "." + group, group_line, "expected a map");
      section.key_lines[group] = group_line;
      if (body.IsMap()) *target = to_json_value(body, group, group_line, "connectors." + id + ".", section).as_object();
    });
    out[id] = std::move(section);
  });
}

config parse_tree(const YAML::Node& root, empty_document empty) {
  config c;
  if (empty == empty_document::refused && (root.IsNull() || (root.IsMap() && root.size() == 0)))
    fail("", 0, "no settings (empty, only comments, or {}); refused rather than resetting every key to its default");
  if (root.IsNull()) return c;  // empty document: all defaults
  if (!root.IsMap()) fail("", line_of(root), "the top level must be a map");
  for_each_entry(root, "", 0, [&](const std::string& key, int line, const YAML::Node& value) {
    if (key == "server") read_server(value, line, c.server);
    else if (key == "store") read_store(value, line, c.store);
    else if (key == "plugins") read_plugins(value, line, c.plugins);
    else if (key == "leases") read_leases(value, line, c.leases);
    else if (key == "delivery") read_delivery(value, line, c.delivery);
    else if (key == "tools") read_tools(value, line, c.tools);
    else if (key == "files") read_files(value, line, c.files);
    else if (key == "log") read_log(value, line, c.log);
    else if (key == "connectors") read_connectors(value, line, c.connectors);
    else fail(key, line, "unknown key");
  });
  return c;
}

// yaml-cpp appends details (an escape character, a version) after ": "; keep only the fixed reason.
std::string parser_reason(const YAML::Exception& e) {
  std::string msg = e.msg;
  if (auto colon = msg.find(": "); colon != std::string::npos) msg.resize(colon);
  return msg.empty() ? "invalid YAML" : "invalid YAML: " + msg;
}

}  // namespace

std::string connector_section::to_json() const {
  boost::json::object obj;
  obj["auth"] = auth;
  obj["config"] = config;
  obj["route"] = route;
  obj["policy"] = policy;
  return boost::json::serialize(obj);
}

std::string config_error::what() const {
  std::string out = file.empty() ? "<config>" : file;
  if (line > 0) {
    out += ':';
    out += std::to_string(line);
  }
  out += ": ";
  if (!key.empty()) {
    out += key;
    out += ": ";
  }
  return out + message;
}

void throw_exception_from_error(const config_error& e, const boost::source_location&) { throw std::runtime_error(e.what()); }

boost::system::result<config, config_error> parse_config(const std::string& yaml_text, const std::string& source_name,
                                                         empty_document empty) {
  try {
    if (yaml_text.size() > max_document_bytes) fail("", 0, "document larger than 1 MiB");
    check_bytes(yaml_text);
    guard_events(yaml_text);
    return parse_tree(YAML::Load(yaml_text), empty);
  } catch (yaml_read::failure& f) {
    return config_error{std::move(f.key), f.line, std::move(f.message), source_name};
  } catch (const YAML::Exception& e) {
    return config_error{"", line_of(e.mark), parser_reason(e), source_name};
  }
}

boost::system::result<config, config_error> load_config(const std::string& path, empty_document empty) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return config_error{"", 0, "cannot read: is a directory", path};
  std::ifstream in(path, std::ios::binary);
  if (!in) return config_error{"", 0, std::string("cannot open: ") + std::strerror(errno), path};
  // Read one byte past the limit so an oversized file is refused without reading all of it.
  std::string text(max_document_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return config_error{"", 0, "cannot read", path};
  text.resize(static_cast<std::size_t>(in.gcount()));
  auto result = parse_config(text, path, empty);
  if (result) result->source_path = path;
  return result;
}

}  // namespace xconn
