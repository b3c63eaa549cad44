#include "core/channels/connector_leases.hpp"

namespace xconn {

bool connector_leases::hello(const std::string& id) {
  ++sockets_[id];
  return deadlines_.erase(id) > 0;
}

std::optional<long long> connector_leases::socket_closed(const std::string& id, long long now) {
  auto it = sockets_.find(id);
  if (it == sockets_.end()) return std::nullopt;
  if (--it->second > 0) return std::nullopt;
  sockets_.erase(it);
  return deadlines_[id] = now + lease_ms_;
}

void connector_leases::restore(const std::string& id, long long deadline) { deadlines_[id] = deadline; }

std::optional<long long> connector_leases::start_grace(const std::string& id, long long now) {
  if (deadlines_.contains(id) || sockets_.contains(id)) return std::nullopt;
  return deadlines_[id] = now + lease_ms_;
}

std::vector<std::string> connector_leases::expire(long long now) {
  std::vector<std::string> out;
  for (auto it = deadlines_.begin(); it != deadlines_.end();) {
    // A socket that holds the id keeps it, whatever a stale deadline says.
    if (it->second <= now && !sockets_.contains(it->first)) {
      out.push_back(it->first);
      it = deadlines_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::size_t connector_leases::sockets(std::string_view id) const {
  auto it = sockets_.find(id);
  return it == sockets_.end() ? 0 : it->second;
}

std::optional<long long> connector_leases::deadline(std::string_view id) const {
  auto it = deadlines_.find(id);
  if (it == deadlines_.end()) return std::nullopt;
  return it->second;
}

}  // namespace xconn
