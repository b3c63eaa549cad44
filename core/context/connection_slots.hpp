// A cap on the connections open at once (server.max_connections). The listener takes a slot for each accepted
// socket; the slot travels with the connection (HTTP session, then its WebSocket) and is given back when that ends.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>

namespace xconn {

class connection_slots {
  struct counter {
    std::atomic<std::size_t> open{0};
  };

 public:
  // Held by one connection; gives its place back when destroyed. Move-only.
  class slot {
   public:
    slot() = default;
    slot(slot&&) noexcept = default;
    slot& operator=(slot&& other) noexcept {
      release();
      held_ = std::move(other.held_);
      return *this;
    }
    ~slot() { release(); }

   private:
    friend class connection_slots;
    explicit slot(std::shared_ptr<counter> held) : held_(std::move(held)) {}
    void release() {
      if (held_) held_->open.fetch_sub(1, std::memory_order_relaxed);
      held_.reset();
    }
    std::shared_ptr<counter> held_;  // shared: a connection may outlive the listener that counted it
  };

  explicit connection_slots(std::size_t capacity) : capacity_(capacity) {}

  // A slot, or nothing when capacity connections are open.
  std::optional<slot> try_take() {
    auto n = counter_->open.load(std::memory_order_relaxed);
    do {
      if (n >= capacity_) return std::nullopt;
    } while (!counter_->open.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    return slot(counter_);
  }
  std::size_t capacity() const { return capacity_; }
  std::size_t open() const { return counter_->open.load(std::memory_order_relaxed); }

 private:
  std::size_t capacity_;
  std::shared_ptr<counter> counter_ = std::make_shared<counter>();
};

}  // namespace xconn
