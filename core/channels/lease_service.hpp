// The runtime lease of every connector_id (seed 000 "Connector Server offline lease"): started when the last
// hello-completed socket of an id closes, cancelled by a hello with it, persisted in the id's record so a
// restart neither resets nor forgets it, and given to every known id at start (the restart grace). When a lease
// runs out, the id is deregistered and each channel it owns is force-deregistered one by one through the
// plugin's logout, then cleaned up: its record, pending inbound messages, idempotency records and consumer
// references go, and a consumer that lost its last reference is stopped. The same release runs whenever a channel
// stops being signed in any other way (channel_service's signed-out listener, installed here).
//
// Sockets report from their strands, the tick runs on an I/O thread, plugin calls on the channel's strand of
// the pool; one mutex guards the leases and nothing slow runs under it.
#pragma once

#include "core/channels/channel_service.hpp"
#include "core/base/config.hpp"
#include "core/base/periodic_timer.hpp"
#include "core/channels/connector_leases.hpp"
#include "core/plugin_host/connector_registry.hpp"
#include "core/channels/consumer_registry.hpp"
#include "core/channels/deferred_logouts.hpp"
#include "core/store/store.hpp"

#include <boost/asio/io_context.hpp>

#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace xconn {

class lease_service {
 public:
  using now_fn = std::function<long long()>;  // unix ms
  // Channels force-deregistered at once while a lease's cleanup runs (each waits on its plugin's logout). Few:
  // each cleanup runs on an I/O thread, and pings measured during 10,000 of them stay near 10 ms at p99 with 4
  // (about 90 ms with 32).
  static constexpr std::size_t deregistrations_in_flight = 4;

  lease_service(store& db, const config& cfg, channel_service& channels, connector_registry& connectors,
                consumer_registry& consumers, deferred_logouts& owed, boost::asio::io_context& io, now_fn now = {});
  ~lease_service();
  lease_service(const lease_service&) = delete;
  lease_service& operator=(const lease_service&) = delete;

  // Reads the leases back and starts one for every known id without a socket (after the channels are loaded).
  // Returns how many ids hold a lease.
  std::size_t load();
  void start();  // the tick
  void stop();

  void hello(const std::string& connector_id);          // a hello completed with it
  void socket_closed(const std::string& connector_id);  // a hello-completed socket ended
  // Deregisters whatever ran out (the timer runs it).
  void tick();

  // Channels still waiting for their forced deregistration, for tests and /health.
  std::size_t deregistrations_pending() const;
  std::uint64_t deregistered() const;  // channels force-deregistered so far

 private:
  void persist(const std::string& connector_id, std::optional<long long> deadline);
  void deregister_connector(const std::string& connector_id);
  void deregister_channels_of(const std::string& connector_id);  // once its id's erase is durable
  void pump_deregistrations();
  void deregister_channel(const channel& c);
  void finish_channel(const channel& c);

  store& db_;
  const config& cfg_;
  channel_service& channels_;
  connector_registry& connectors_;
  consumer_registry& consumers_;
  deferred_logouts& owed_;
  boost::asio::io_context& io_;
  now_fn now_;
  mutable std::mutex mutex_;
  connector_leases leases_;
  std::deque<channel> waiting_;  // channels to deregister, in order
  std::size_t running_ = 0;
  std::uint64_t deregistered_ = 0;
  periodic_timer tick_timer_;
  bool stopped_ = false;
};

}  // namespace xconn
