// Which message a sender's msg_id became, per channel (adapters page "webhook": the same msg_id again answers 202
// with the first message_id). The host's dedup answers a repeat with no id, so the plugin keeps its own: in memory
// here, durable in its key-value store as "seen/<channel>/<msg_id>" = "<unix ms>[ <message_id>]", bounded by age and
// by count so the store's quota is never reached. Not thread-safe: the plugin holds its lock around every call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace webhook {

class replay_index {
 public:
  static constexpr std::string_view kv_prefix = "seen/";

  struct entry {
    std::int64_t at_ms = 0;
    std::string message_id;  // "" when only the marker committed with the message survived (a crash before the id)
  };

  static std::string key(std::string_view channel, std::string_view msg_id) {
    return std::string(channel) + "/" + std::string(msg_id);
  }
  static std::string kv_key(std::string_view key) { return std::string(kv_prefix) + std::string(key); }
  static std::string kv_value(const entry& e) {
    return std::to_string(e.at_ms) + (e.message_id.empty() ? "" : " " + e.message_id);
  }

  // One stored pair from the key-value store (key without the prefix); false when it is not one of ours.
  bool load(std::string_view key, std::string_view value) {
    if (key.find('/') == std::string_view::npos) return false;
    auto space = value.find(' ');
    auto number = value.substr(0, space);
    if (number.empty() || number.size() > 18 || number.find_first_not_of("0123456789") != std::string_view::npos) return false;
    entry e{std::stoll(std::string(number)), space == std::string_view::npos ? "" : std::string(value.substr(space + 1))};
    entries_[std::string(key)] = e;
    order_.emplace_back(e.at_ms, std::string(key));
    sorted_ = false;
    return true;
  }

  std::optional<entry> find(const std::string& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? std::nullopt : std::optional(it->second);
  }
  void put(const std::string& key, entry e) {
    auto it = entries_.find(key);
    bool moved = it == entries_.end() || it->second.at_ms != e.at_ms;
    entries_.insert_or_assign(key, e);
    if (moved) order_.emplace_back(e.at_ms, key);  // an older item of the key is skipped when pruning reaches it
  }
  std::size_t size() const { return entries_.size(); }

  // The keys past keep_ms of age, and the oldest beyond max: removed here, to be erased from the store.
  std::vector<std::string> prune(std::int64_t now_ms, std::int64_t keep_ms, std::size_t max) {
    if (!sorted_) {
      std::stable_sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      sorted_ = true;
    }
    std::vector<std::string> gone;
    while (!order_.empty() && (order_.front().first < now_ms - keep_ms || entries_.size() > max)) {
      auto it = entries_.find(order_.front().second);
      if (it != entries_.end() && it->second.at_ms == order_.front().first) {
        gone.push_back(it->first);
        entries_.erase(it);
      }
      order_.pop_front();
    }
    return gone;
  }

  // Every key of one channel: removed here, to be erased from the store.
  std::vector<std::string> drop_channel(std::string_view channel) {
    std::vector<std::string> gone;
    auto prefix = std::string(channel) + "/";
    for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix);) {
      gone.push_back(it->first);
      it = entries_.erase(it);
    }
    return gone;  // their order_ items are skipped when pruning reaches them
  }

 private:
  std::map<std::string, entry> entries_;
  std::deque<std::pair<std::int64_t, std::string>> order_;  // (at, key), oldest first once sorted
  bool sorted_ = true;
};

}  // namespace webhook
