// connector_id offline leases (seed 000 "Connector Server offline lease", spec §8.2, docs/protocol.md "Data plane"): an
// id lives while a hello-completed socket holds it; when the last one closes, its lease runs; a hello with the id
// cancels it; when it runs out, the id and everything it owns are deregistered.
//
// Pure state on an injected clock (unix ms passed in): the lease service keeps one behind its mutex, persists
// the deadlines this reports, and acts on what expires.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

class connector_leases {
 public:
  explicit connector_leases(long long lease_ms) : lease_ms_(lease_ms) {}

  // A hello completed with id. Returns true when it cancelled a running lease.
  bool hello(const std::string& id);
  // A hello-completed socket of id closed. Returns the deadline when it was the last one (the lease starts).
  std::optional<long long> socket_closed(const std::string& id, long long now);
  // A deadline read back at start: kept as it was, never reset.
  void restore(const std::string& id, long long deadline);
  // At start, an id with no deadline and no socket yet: its lease starts now (a restart forgets nothing).
  // Returns the deadline it got, or nullopt when it already had one.
  std::optional<long long> start_grace(const std::string& id, long long now);
  // Ids whose lease ran out, forgotten here.
  std::vector<std::string> expire(long long now);

  std::size_t sockets(std::string_view id) const;
  std::optional<long long> deadline(std::string_view id) const;
  std::size_t leased() const { return deadlines_.size(); }

 private:
  long long lease_ms_;
  std::map<std::string, std::size_t, std::less<>> sockets_;
  std::map<std::string, long long, std::less<>> deadlines_;
};

}  // namespace xconn
