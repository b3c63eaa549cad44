// Idempotency of side-effect tools (spec §8.19, docs/protocol.md "Tools"): the first call with a key runs; its ack is
// committed to LMDB before anyone sees it; a repeat within the window gets that ack again without running the
// tool, across restarts; a repeat while the first still runs waits for it.
#pragma once

#include "core/store/store.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace xconn {

// What a tool.invoke ack carries: a result, or a business error.
struct tool_outcome {
  bool ok = false;
  std::string result_json;  // ok
  std::string code;         // !ok
  std::string message;
};

class tool_calls {
 public:
  static constexpr std::string_view database = "tool_calls";
  using done_fn = std::function<void(tool_outcome)>;
  // Runs the tool; calls finish exactly once with the outcome and whether it may be replayed (a timeout or a
  // crash must not be: the side effect may or may not have happened, and the caller decides to retry).
  using run_fn = std::function<void(std::function<void(tool_outcome, bool keep)> finish)>;

  tool_calls(store& db, std::chrono::seconds window) : db_(db), window_(window) {}
  // Waits for the commits whose completions still refer to this object. Not from the store's writer thread.
  ~tool_calls() { db_.flush(); }
  tool_calls(const tool_calls&) = delete;
  tool_calls& operator=(const tool_calls&) = delete;

  // The channel was deregistered: its replay records go.
  void drop_channel(std::string_view plugin_id, std::string_view channel_id);
  static std::string key_for(std::string_view plugin_id, std::string_view channel_id, std::string_view key);

  // done runs on the store's writer thread (a fresh outcome) or the caller's (a replay); post real work.
  void run_once(const std::string& key, run_fn run, done_fn done);

  // Learns the stored records' times (at start, before any call): the sweep erases them when they end.
  void load();
  // Erases every record whose window has ended (in bounded transactions); returns how many.
  std::size_t sweep();

 private:
  struct recorded {
    long long at;  // unix ms
    std::string key;
  };
  store& db_;
  std::chrono::seconds window_;
  std::mutex mutex_;
  std::map<std::string, std::vector<done_fn>, std::less<>> running_;  // key -> who waits
  // Every record's time, oldest first: the sweep takes the ended ones from the front without reading the store
  // (the keys are hashes, so the store's order says nothing about age).
  std::deque<recorded> by_age_;
  // Keys whose ended record was written over by a new one before the sweep came: their older by_age_ entry
  // must not erase the new record. key -> how many such older entries wait.
  std::map<std::string, int, std::less<>> replaced_;
};

}  // namespace xconn
