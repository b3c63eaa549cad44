// Answers calls after a delay from one thread owned by the plugin instance, so a waiting tool never holds a
// host thread.
#pragma once

#include <xconn/plugin.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace echo {

class delay_queue {
 public:
  delay_queue() = default;
  delay_queue(const delay_queue&) = delete;
  delay_queue& operator=(const delay_queue&) = delete;
  ~delay_queue() { stop(); }

  void start() {
    std::lock_guard lock(mutex_);
    if (running_) return;
    running_ = true;
    worker_ = std::thread([this] { run(); });
  }

  // Joins the thread, then fails every call still waiting as "stopped" (retryable). Safe to repeat.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (!running_) return;
      running_ = false;
    }
    wake_.notify_all();
    worker_.join();
    std::multimap<clock::time_point, entry> left;
    {
      std::lock_guard lock(mutex_);
      left.swap(pending_);
    }
    for (auto& [due, waiting] : left) waiting.done.fail(stopped());
  }

  // Completes done with result_json once delay has passed; fails it at once when the queue is not running.
  void schedule(std::chrono::milliseconds delay, std::string result_json, xconn::sdk::completion done) {
    {
      std::lock_guard lock(mutex_);
      if (running_) {
        pending_.emplace(clock::now() + delay, entry{std::move(result_json), std::move(done)});
        wake_.notify_one();
        return;
      }
    }
    done.fail(stopped());
  }

 private:
  using clock = std::chrono::steady_clock;
  struct entry {
    std::string result_json;
    xconn::sdk::completion done;
  };

  static xconn::sdk::error stopped() { return {"stopped", "echo stopped before the wait ended", true}; }

  void run() {
    std::unique_lock lock(mutex_);
    while (running_) {
      if (pending_.empty()) {
        wake_.wait(lock);
      } else if (clock::now() < pending_.begin()->first) {
        wake_.wait_until(lock, pending_.begin()->first);
      } else {
        auto due = pending_.extract(pending_.begin());
        // Completes unlocked: the host may take its time copying the result.
        lock.unlock();
        due.mapped().done.ok(due.mapped().result_json);
        lock.lock();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<clock::time_point, entry> pending_;
  bool running_ = false;
  std::thread worker_;
};

}  // namespace echo
