#include "core/context/socket_set.hpp"

namespace xconn {

void socket_set::add(const std::shared_ptr<data_socket>& s) {
  std::lock_guard lock(mutex_);
  sockets_[s.get()] = s;
}

void socket_set::remove(const data_socket* s) {
  std::lock_guard lock(mutex_);
  sockets_.erase(s);
}

std::vector<std::shared_ptr<data_socket>> socket_set::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<data_socket>> out;
  for (const auto& [p, weak] : sockets_)
    if (auto s = weak.lock()) out.push_back(std::move(s));
  return out;
}

std::size_t socket_set::size() const {
  std::lock_guard lock(mutex_);
  return sockets_.size();
}

}  // namespace xconn
