// The bytes of request bodies a server reads for callers without an API key (public routes: webhooks, the public
// documents, signed downloads), counted across all connections together: whoever holds no key cannot make the
// server hold more than server.max_public_body_bytes of bodies at once, however many connections they open.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

namespace xconn {

class body_budget {
 public:
  // Bytes taken from the budget; given back when the grant is destroyed (the request is done).
  class grant {
   public:
    grant(grant&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) { other.budget_ = nullptr; }
    grant& operator=(grant&& other) noexcept;
    grant(const grant&) = delete;
    grant& operator=(const grant&) = delete;
    ~grant();

   private:
    friend class body_budget;
    grant(body_budget* budget, std::uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    body_budget* budget_;
    std::uint64_t bytes_;
  };

  // bytes more, if the bytes in use then stay within limit; nullopt (nothing taken) otherwise.
  std::optional<grant> take(std::uint64_t bytes, std::uint64_t limit);
  std::uint64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> in_use_{0};
};

}  // namespace xconn
