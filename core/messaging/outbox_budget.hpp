// What one data-plane socket has queued for its peer, against server.max_outbox_bytes, and whether deliveries to it
// are held: from the moment the budget is reached until the queue drains below a quarter of it (docs/protocol.md
// "Limits"). Thread-safe: frames are counted in from any thread, out on the socket's strand.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace xconn {

class outbox_budget {
 public:
  // Where the waiters of a drain run (the socket's strand): never inline, since a waiter's caller may hold a lock.
  using post_fn = std::function<void(std::function<void()>)>;
  outbox_budget(std::uint64_t budget, post_fn post) : budget_(budget), post_(std::move(post)) {}

  // A frame that is queued whatever the budget (an answer, a pong, a progress push).
  void add(std::uint64_t bytes);
  // A delivery: counted and true only while not holding and below the budget (checked and reserved in one step, so
  // two threads cannot both take the last room); else the budget holds deliveries and false.
  bool try_add(std::uint64_t bytes);
  // A frame written or dropped; below a quarter of the budget the hold ends and the waiters are posted.
  void remove(std::uint64_t bytes);
  // fn is posted once the hold ends, or at once when deliveries are not held.
  void when_drained(std::function<void()> fn);
  // The socket is going: the waiters are dropped unrun (their channels get a new route), and nothing is posted.
  void forget_waiters();

  bool holding() const { return holding_.load(std::memory_order_acquire); }
  std::uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  std::uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  std::uint64_t budget() const { return budget_; }

 private:
  void note_peak(std::uint64_t now);
  void hold();
  void release();

  const std::uint64_t budget_;
  post_fn post_;
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> peak_{0};
  std::atomic<bool> holding_{false};
  std::mutex mutex_;  // holding_'s changes and the waiters
  std::vector<std::function<void()>> waiters_;
  bool gone_ = false;  // forget_waiters was called
};

}  // namespace xconn
