#include "core/context/body_budget.hpp"

#include <utility>

namespace xconn {

body_budget::grant& body_budget::grant::operator=(grant&& other) noexcept {
  if (this != &other) {
    if (budget_) budget_->in_use_.fetch_sub(bytes_, std::memory_order_relaxed);
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

body_budget::grant::~grant() {
  if (budget_) budget_->in_use_.fetch_sub(bytes_, std::memory_order_relaxed);
}

std::optional<body_budget::grant> body_budget::take(std::uint64_t bytes, std::uint64_t limit) {
  // Compare-and-swap: two connections racing for the last room cannot both get it.
  auto used = in_use_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit || used > limit - bytes) return std::nullopt;
  } while (!in_use_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return grant(this, bytes);
}

}  // namespace xconn
