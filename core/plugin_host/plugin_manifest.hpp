// What a plugin declares about itself (its manifest JSON), checked before anything is served.
#pragma once

#include "core/plugin_host/length_unit.hpp"

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace xconn {

// Seed 002's `chat`: the room the connector's messages go into, and the limits its target really has.
struct chat_limits {
  std::string title;
  std::map<std::string, std::string> roles;  // id -> label
  int max_length = 500;                      // in unit: 1-4000 characters, or 1-65536 bytes or UTF-16 units
  length_unit unit = length_unit::characters;
  // Finals per conversation in a sliding minute. 0 (declared as 0): no host cap, the plugin paces its target itself
  // (IRC writes lines at policy.lines_per_second); absent still means 6, as in seed 002.
  int max_per_minute = 6;
};

struct tool_options {
  bool side_effect = false;
  int timeout_ms = 0;  // 0: the host's tools.timeout_s
  // Never blocks and shares no state with the channel's other calls unguarded: the host may run it on the
  // calling socket's I/O thread, beside the channel's other calls, within plugins.inline_budget_us.
  bool non_blocking = false;
};

// How the plugin's target shows assistant output (plugin.h on_update / on_activity).
struct delivery_flags {
  bool can_edit = false;   // streams deltas into one target message
  bool typing = false;     // shows chat.activity as typing
  bool can_split = false;  // sends a final longer than chat.max_length in parts itself
};

// A route under the connector's base path for targets that call in (webhooks) or admin helpers.
struct http_route {
  std::string path;    // "/inject": starts with '/', then [a-z0-9_/-]; the last segment may be a {param}
  std::string method;  // "GET", "POST", "PUT" or "DELETE"
  bool is_public = false;  // public: no API key; the plugin authenticates callers itself
};

struct plugin_manifest {
  std::string id;                        // plugin id: [a-z0-9-]{1,32}
  std::string card_id;                   // connector_card_id
  std::string card_version;              // connector.version
  boost::json::object build;             // {"version","git_tag","git_rev","build_time"}
  boost::json::object card;              // the served Connector Card (host fields added, schema-checked)
  std::map<std::string, tool_options> tools;  // every card tool, with its options
  std::string skill;                     // the served SKILL.md (empty: none)
  std::string system_prompt;
  std::optional<chat_limits> chat;
  boost::json::object capability;        // AIOS capability without `health` (the host adds it live)
  delivery_flags delivery;
  std::vector<http_route> http_routes;

  // The declared route for method and path, or null; a route ending in "{param}" matches one segment of
  // [A-Za-z0-9_.~-]{1,128} there (its value in *param). A route without a parameter is tried first.
  const http_route* find_route(std::string_view method, std::string_view path, std::string* param = nullptr) const;
  bool has_route_path(std::string_view path) const;
};

bool valid_plugin_id(std::string_view id);

// The provider of the card's first target (the AIOS "target"), else the plugin id.
std::string target_provider(const plugin_manifest& m);

// The skill name a card id maps to (spec §4.2): "connector-" + id with '.' and '_' as '-'.
std::string skill_name_for(std::string_view card_id);

// Parses and validates a manifest and the plugin's build facts; the error names the field at fault.
boost::system::result<plugin_manifest, std::string> parse_manifest(std::string_view manifest_json,
                                                                   std::string_view build_json);

}  // namespace xconn
