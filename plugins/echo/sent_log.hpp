// The outbound finals echo "delivered", newest last, for GET /sent. Bounded both ways: the host calls send
// from several pool threads for as long as it runs.
#pragma once

#include <boost/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace echo {

class sent_log {
 public:
  // Keys are remembered longer than entries (at least 10000), so a late retry of a final that already
  // scrolled out of the log is still not logged twice.
  explicit sent_log(std::size_t max_entries)
      : max_entries_(max_entries), max_keys_(std::max<std::size_t>(max_entries, 10000)) {}

  // Logs one final unless its key was logged before; false for a repeat.
  bool add(const std::string& message_id, std::string text, std::vector<std::string> files, std::int64_t at_ms) {
    std::lock_guard lock(mutex_);
    if (!keys_.insert(message_id).second) return false;
    key_order_.push_back(message_id);
    if (key_order_.size() > max_keys_) {
      keys_.erase(key_order_.front());
      key_order_.pop_front();
    }
    entries_.push_back({message_id, std::move(text), std::move(files), at_ms});
    if (entries_.size() > max_entries_) entries_.pop_front();
    return true;
  }

  // [{"message_id","text","files","at"}], oldest first.
  boost::json::array to_json() const {
    std::lock_guard lock(mutex_);
    boost::json::array out;
    out.reserve(entries_.size());
    for (const entry& e : entries_) {
      boost::json::array files;
      for (const std::string& ref : e.files) files.emplace_back(ref);
      out.push_back(boost::json::object{
          {"message_id", e.message_id}, {"text", e.text}, {"files", std::move(files)}, {"at", e.at_ms}});
    }
    return out;
  }

 private:
  struct entry {
    std::string message_id;
    std::string text;
    std::vector<std::string> files;  // file_refs
    std::int64_t at_ms;
  };

  mutable std::mutex mutex_;
  std::size_t max_entries_;
  std::size_t max_keys_;
  std::deque<entry> entries_;
  std::unordered_set<std::string> keys_;
  std::deque<std::string> key_order_;  // oldest first: the one dropped when keys_ is full
};

}  // namespace echo
