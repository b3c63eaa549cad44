// The host configuration (conf/xconnd.yaml): every key with its default, loaded strictly.
#pragma once

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xconn {

struct server_config {
  std::string listen = "127.0.0.1:8840";  // HOST:PORT; port 0 picks a free one
  std::string public_base_url;            // empty: "http://" + the bound listen address
  std::vector<std::string> api_keys;      // empty: one is generated into store.path/api_key
  int io_threads = 0;                     // 0: one per core
  int heartbeat_s = 30;
  int hello_timeout_s = 30;  // a data-plane socket without connector.hello by then is closed (1008)
  std::uint64_t max_frame_bytes = 1048576;
  // A data-plane socket's frames waiting to be written, in bytes: past half, reading from it pauses; past all, its
  // waiting frames are dropped (their messages stay unacked, so they come again) and it is closed with 1008.
  std::uint64_t max_outbox_bytes = 16777216;
  // HTTP and WebSocket connections open at once; past it a new connection is closed as soon as it is accepted.
  int max_connections = 4096;
  // Request bodies read for callers without an API key (public routes), in bytes, all connections together; a
  // public request that would go past it is answered 503 before its body is read.
  std::uint64_t max_public_body_bytes = 33554432;
};

struct store_config {
  std::string path = "./var/xconn";
  std::uint64_t map_size_bytes = 8589934592ull;
  std::string sealing_key_file;  // the key channel credentials are sealed with; "" is {path}/sealing_key
  std::string sealing_key_path() const { return sealing_key_file.empty() ? path + "/sealing_key" : sealing_key_file; }
};

struct plugins_config {
  std::string dir = "./build/plugins";
  bool watch = true;
  std::vector<std::string> allow;
  int threads = 4;
  // A tool its manifest declares non_blocking runs on the calling socket's I/O thread, no hand-off, as long as
  // its calls return within this; one whose calls overrun 3 times in a row goes to the pool (0: never inline).
  int inline_budget_us = 200;
  int reload_pause_max_calls = 10000;
  int reload_pause_max_s = 10;
  std::uint64_t kv_quota_bytes = 16ull << 20;  // each plugin's key-value store: keys and values together
};

struct leases_config {
  int connector_offline_s = 3600;
  int unauthenticated_channel_s = 600;
  // Temporary (never authenticated) channels one connector_id, and one hosted connector, may hold at once;
  // past either, channel.open answers capacity_exceeded.
  int max_temporary_per_connector_id = 256;
  int max_temporary_per_connector = 4096;
};

struct delivery_config {
  int window = 32;
  int ack_timeout_s = 10;
  int retry_max_s = 300;
  int send_timeout_s = 30;
  int expiry_s = 3600;
  int max_pending_per_channel = 1000;
  int delta_ttl_s = 600;
  int max_open_deltas_per_channel = 64;
  int completed_ids_s = 86400;
  bool context_in_text = true;
};

struct tools_config {
  int timeout_s = 30;
  int idempotency_s = 86400;
};

struct files_config {
  std::uint64_t max_bytes = 104857600;
  int ttl_s = 604800;
  int url_ttl_s = 3600;
  // An upload must end within upload_grace_s + its expected bytes / upload_min_bytes_per_s, else 408.
  std::uint64_t upload_min_bytes_per_s = 16384;
  int upload_grace_s = 30;
};

// The host log (core/base/log.hpp): how lines look and where they go.
struct log_config {
  std::string format = "text";  // "text" (one line: time, level, message) or "json" (one object per line)
  std::string file;             // "": stderr (journald under systemd); else this file, appended to (created 0640)
  std::string level = "info";   // trace, debug, info, warn or error
};

// One connector's section: the four groups of seed 004, each a JSON object converted from YAML
// (scalars stay strings unless they are YAML booleans, integers or floats).
struct connector_section {
  boost::json::object auth;
  boost::json::object config;
  boost::json::object route;
  boost::json::object policy;
  int line = 0;  // 1-based line of the section in the file, 0 when absent
  // 1-based line of every key inside the section, by dotted path ("config.greeting").
  std::map<std::string, int> key_lines;

  // {"auth":{...},"config":{...},"route":{...},"policy":{...}}: what the plugin validates.
  std::string to_json() const;
};

struct config {
  server_config server;
  store_config store;
  plugins_config plugins;
  leases_config leases;
  delivery_config delivery;
  tools_config tools;
  files_config files;
  log_config log;
  std::map<std::string, connector_section> connectors;  // by plugin id
  std::string source_path;                             // the file it came from, for messages
};

// A config error names the key (dotted path) and its 1-based line (0 when the file itself is at fault).
struct config_error {
  std::string key;
  int line = 0;
  std::string message;
  std::string what() const;  // "<file>:<line>: <key>: <message>"
  std::string file;
};
// Lets boost::system::result<T, config_error>::value() throw (used by tests and tools only).
[[noreturn]] void throw_exception_from_error(const config_error& e, const boost::source_location& loc);

// Loads YAML text: ${NAME} from the environment (unset is an error), a default for every key, unknown
// keys, wrong types and out-of-range values are errors. Hostile input (alias bombs, huge scalars, deep
// nesting, documents over 1 MiB) is refused.
// A document with no settings (only whitespace, comments, "---", null or {}): every default when the server starts
// or a config is given as text; refused on a reload, where it is far more likely a truncated or half-written file
// than a wish to reset every key and drop every connector section.
enum class empty_document { defaults, refused };
boost::system::result<config, config_error> parse_config(const std::string& yaml_text,
                                                         const std::string& source_name = "<config>",
                                                         empty_document empty = empty_document::defaults);
boost::system::result<config, config_error> load_config(const std::string& path,
                                                        empty_document empty = empty_document::defaults);

}  // namespace xconn
