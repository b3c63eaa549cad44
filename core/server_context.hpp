// What every HTTP and WebSocket session of one server shares. Owned by the server; outlives sessions.
#pragma once

#include "core/api_keys.hpp"
#include "core/config.hpp"
#include "core/connector_ids.hpp"
#include "core/connector_registry.hpp"
#include "core/store.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace xconn {

class ws_session;
class channel_service;
class inbound_service;
class outbound_service;
class lease_service;
class consumer_registry;
class file_store;
class download_links;

// The open data-plane sockets, so shutdown can close each with 1001.
class ws_session_set {
 public:
  void add(const std::shared_ptr<ws_session>& s);
  void remove(const ws_session* s);
  std::vector<std::shared_ptr<ws_session>> snapshot() const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<const ws_session*, std::weak_ptr<ws_session>> sessions_;
};

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
  std::string public_base_url;  // no trailing slash
  ws_session_set sessions;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> profile_dropped{0};  // packets of a profile their socket did not negotiate
};

}  // namespace xconn
