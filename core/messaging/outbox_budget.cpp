#include "core/messaging/outbox_budget.hpp"

namespace xconn {

void outbox_budget::add(std::uint64_t bytes) { note_peak(bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes); }

bool outbox_budget::try_add(std::uint64_t bytes) {
  auto queued = bytes_.load(std::memory_order_relaxed);
  do {
    if (holding() || queued >= budget_) {
      hold();
      return false;
    }
  } while (!bytes_.compare_exchange_weak(queued, queued + bytes, std::memory_order_relaxed));
  note_peak(queued + bytes);
  return true;
}

void outbox_budget::remove(std::uint64_t bytes) {
  auto now = bytes_.fetch_sub(bytes, std::memory_order_relaxed) - bytes;
  if (holding() && now <= budget_ / 4) release();
}

void outbox_budget::when_drained(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (gone_) return;
    if (holding_) {
      waiters_.push_back(std::move(fn));
      return;
    }
  }
  post_(std::move(fn));
}

void outbox_budget::forget_waiters() {
  std::lock_guard lock(mutex_);
  gone_ = true;
  waiters_.clear();
}

void outbox_budget::note_peak(std::uint64_t now) {
  for (auto peak = peak_.load(std::memory_order_relaxed);
       peak < now && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed);) {
  }
}

void outbox_budget::hold() {
  {
    std::lock_guard lock(mutex_);
    holding_ = true;
  }
  // The writes may have drained the queue between the caller's look and the flag: nobody else would end it then.
  if (bytes_.load(std::memory_order_relaxed) <= budget_ / 4) release();
}

void outbox_budget::release() {
  std::vector<std::function<void()>> waiters;
  {
    std::lock_guard lock(mutex_);
    if (!holding_) return;
    holding_ = false;
    if (gone_) return;
    waiters.swap(waiters_);
  }
  for (auto& fn : waiters) post_(std::move(fn));
}

}  // namespace xconn
