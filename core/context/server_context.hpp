// What every HTTP and WebSocket session of one server shares. Owned by the server; outlives sessions.
#pragma once

#include "core/base/api_keys.hpp"
#include "core/base/config.hpp"
#include "core/context/body_budget.hpp"
#include "core/channels/connector_ids.hpp"
#include "core/files/file_store.hpp"
#include "core/context/socket_set.hpp"
#include "core/plugin_host/connector_registry.hpp"
#include "core/store/store.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <functional>
#include <cstdint>
#include <string>

namespace xconn {

class channel_service;
class inbound_service;
class outbound_service;
class lease_service;
class consumer_registry;
class file_store;
class download_links;
class event_log;
class config_reloader;

struct server_context {
  const config& cfg;
  const api_keys& keys;
  store& db;
  connector_registry& connectors;
  connector_ids& ids;
  channel_service& channels;
  inbound_service& inbound;
  outbound_service& outbound;
  lease_service& leases;
  consumer_registry& consumers;
  file_store& files;
  const download_links& links;
  event_log& events;
  boost::asio::io_context& io;
  std::string public_base_url;  // no trailing slash
  file_lookup message_files;    // files named by messages and tool results: described, and their URLs signed
  socket_set sessions;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> profile_dropped{0};  // packets of a profile their socket did not negotiate
  config_reloader* reloader = nullptr;           // re-reads the YAML (set once the server is built)
  std::function<std::size_t()> open_connections;  // HTTP and WebSocket connections now (set once listening)
  struct build_facts {
    std::string version, revision;  // of the daemon binary ("" in tests), for xconn_build_info
  } build;
  body_budget public_bodies;  // bodies read without an API key, against server.max_public_body_bytes
};

}  // namespace xconn
