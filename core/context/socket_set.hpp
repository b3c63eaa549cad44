// The open data-plane sockets of a server, so a shutdown or a plugin's removal can close them with 1001.
// It knows a socket only by what closing needs, so this layer never includes the socket itself.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace xconn {

class data_socket {
 public:
  virtual ~data_socket() = default;
  // Closes with 1001 (server going away); safe from any thread.
  virtual void shut_down() = 0;
  // Drops the TCP connection at once (a peer that never finished the close); safe from any thread.
  virtual void abort() = 0;
  virtual const std::string& plugin_id() const = 0;
  // Bytes queued for the peer and not yet written (every frame, from the moment it is queued), and the most this
  // socket ever had queued: what server.max_outbox_bytes bounds (/metrics). Any thread.
  virtual std::uint64_t outbox_bytes() const = 0;
  virtual std::uint64_t outbox_peak_bytes() const = 0;
};

class socket_set {
 public:
  void add(const std::shared_ptr<data_socket>& s);
  void remove(const data_socket* s);
  std::vector<std::shared_ptr<data_socket>> snapshot() const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<const data_socket*, std::weak_ptr<data_socket>> sockets_;
};

}  // namespace xconn
