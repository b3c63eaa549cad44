#include "core/server_context.hpp"

#include "core/ws_session.hpp"

namespace xconn {

void ws_session_set::add(const std::shared_ptr<ws_session>& s) {
  std::lock_guard lock(mutex_);
  sessions_[s.get()] = s;
}

void ws_session_set::remove(const ws_session* s) {
  std::lock_guard lock(mutex_);
  sessions_.erase(s);
}

std::vector<std::shared_ptr<ws_session>> ws_session_set::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<ws_session>> out;
  for (const auto& [p, weak] : sessions_)
    if (auto s = weak.lock()) out.push_back(std::move(s));
  return out;
}

std::size_t ws_session_set::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace xconn
