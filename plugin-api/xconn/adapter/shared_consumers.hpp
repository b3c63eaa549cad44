// The consumers an adapter shares between channels: per target key (a bot token's key, a (server, nick, password)
// key) one consumer, a poller or a connection, held by every channel bound through it and let go when the last one
// leaves. Given an sdk::host it also keeps the host's reference count (acquire_consumer / release_consumer), so the
// host's registry and the adapter's agree. Thread-safe: a host call and the event loop may use it at once.
//
// Usage (a poller per bot token):
//
//   xconn::adapter::shared_consumers<poller> pollers_{host_};
//
//   void bind(const std::string& channel, const std::string& token) {
//     auto key = xconn::kit::consumer_key(host_, "bot-", token);
//     auto got = pollers_.acquire(key, channel, [&] { return std::make_shared<poller>(token); });
//     if (got.created) spawn(poll(got.consumer));         // the first channel starts it
//     if (got.released) got.released->stop();             // the channel held another bot's, now without holders
//   }
//   void forget(const std::string& channel) {
//     if (auto last = pollers_.release(channel)) last->stop();
//   }
//   void consumer_stop(std::string_view key, completion done) override {  // the host's: no channel holds it
//     if (auto p = pollers_.take(std::string(key))) p->stop();
//     done.ok();
//   }
//   void on_halted() override { for (auto& p : pollers_.take_all()) p->stop(); }
//
// A sign-in that checks the target before it binds (IRC) opens the consumer unheld with open(key, make), binds with
// acquire once the target said yes, and on a refusal drops it with discard_if_unused(key).
#pragma once

#include <xconn/plugin.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace xconn::adapter {

template <class Consumer>
class shared_consumers {
 public:
  using pointer = std::shared_ptr<Consumer>;

  struct acquired {
    pointer consumer;              // the key's consumer, never null
    bool created = false;          // made by this call: the caller starts it
    pointer released;              // the consumer the channel held before under another key, when it was the last
                                   // holder of it (the caller stops it); else null
    bool refused_by_host = false;  // the host would not count the reference (a bad key, a channel not of this plugin)
  };

  // Without a host: the adapter's own counts only (tests, or an adapter whose host keeps no references).
  shared_consumers() = default;
  explicit shared_consumers(xconn::sdk::host host) : host_(host) {}

  shared_consumers(const shared_consumers&) = delete;
  shared_consumers& operator=(const shared_consumers&) = delete;

  // Binds channel to key's consumer, made by make() (a callable returning pointer) when there is none. Idempotent
  // per (channel, key); a channel bound to another key moves (its old reference released). make runs under the
  // registry's lock, once per key however many threads acquire at once: it builds, it must not call back in here;
  // the caller starts the consumer when created.
  template <class Make>
  acquired acquire(const std::string& key, const std::string& channel, Make&& make) {
    std::lock_guard order(host_order_);
    acquired out;
    std::string left_key;
    {
      std::lock_guard lock(mutex_);
      if (auto bound = key_by_channel_.find(channel); bound != key_by_channel_.end() && bound->second != key) {
        left_key = bound->second;
        out.released = unbind_locked(channel, left_key);
      }
      auto& e = entry_locked(key, std::forward<Make>(make), out.created);
      e.channels.insert(channel);
      key_by_channel_[channel] = key;
      out.consumer = e.consumer;
    }
    if (host_) {
      if (!left_key.empty()) host_->release_consumer(channel, left_key);
      out.refused_by_host = host_->acquire_consumer(channel, key) < 0;
    }
    return out;
  }

  // The key's consumer without binding a channel (a sign-in still checking the target): found, or made by make.
  template <class Make>
  acquired open(const std::string& key, Make&& make) {
    std::lock_guard lock(mutex_);
    acquired out;
    out.consumer = entry_locked(key, std::forward<Make>(make), out.created).consumer;
    return out;
  }

  // The channel no longer holds its consumer (signed out, ended). Returns the consumer when the channel was its
  // last holder: it is gone from here and the caller stops it. Null when it was not the last or the channel held none.
  pointer release(const std::string& channel) {
    std::lock_guard order(host_order_);
    std::string key;
    pointer last;
    {
      std::lock_guard lock(mutex_);
      auto bound = key_by_channel_.find(channel);
      if (bound == key_by_channel_.end()) return nullptr;
      key = bound->second;
      last = unbind_locked(channel, key);
    }
    if (host_) host_->release_consumer(channel, key);
    return last;
  }

  // Drops key's consumer when no channel holds it (a sign-in refused after open). Returns it, else null.
  pointer discard_if_unused(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = by_key_.find(key);
    if (it == by_key_.end() || !it->second.channels.empty()) return nullptr;
    auto consumer = std::move(it->second.consumer);
    by_key_.erase(it);
    return consumer;
  }

  // Takes key's consumer away whoever holds it: the host's consumer_stop (its last reference went), or the target
  // refusing the credential for good. The channels it held are unbound here and listed in *unbound; the host is
  // not called (at consumer_stop it already let go; a channel revoked with set_channel_status loses its references
  // there). Null when there is none.
  pointer take(const std::string& key, std::vector<std::string>* unbound = nullptr) {
    std::lock_guard lock(mutex_);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return nullptr;
    for (const auto& channel : it->second.channels) {
      key_by_channel_.erase(channel);
      if (unbound) unbound->push_back(channel);
    }
    auto consumer = std::move(it->second.consumer);
    by_key_.erase(it);
    return consumer;
  }

  // Every consumer, taken at halt for the caller to stop. The host keeps its references: a restart's restore binds
  // the channels again.
  std::vector<pointer> take_all() {
    std::lock_guard lock(mutex_);
    std::vector<pointer> out;
    out.reserve(by_key_.size());
    for (auto& [key, e] : by_key_) out.push_back(std::move(e.consumer));
    by_key_.clear();
    key_by_channel_.clear();
    return out;
  }

  pointer find(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : it->second.consumer;
  }
  // The consumer the channel is bound to, null when none.
  pointer of(const std::string& channel) const {
    std::lock_guard lock(mutex_);
    auto bound = key_by_channel_.find(channel);
    return bound == key_by_channel_.end() ? nullptr : by_key_.at(bound->second).consumer;
  }
  std::optional<std::string> key_of(const std::string& channel) const {
    std::lock_guard lock(mutex_);
    auto bound = key_by_channel_.find(channel);
    return bound == key_by_channel_.end() ? std::nullopt : std::optional(bound->second);
  }
  std::vector<std::string> channels_of(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = by_key_.find(key);
    return it == by_key_.end() ? std::vector<std::string>{}
                               : std::vector<std::string>(it->second.channels.begin(), it->second.channels.end());
  }
  std::size_t holders(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = by_key_.find(key);
    return it == by_key_.end() ? 0 : it->second.channels.size();
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return by_key_.size();
  }
  // Every (key, consumer) at this moment, for a walk outside the lock (health: is any held one down?).
  std::vector<std::pair<std::string, pointer>> snapshot() const {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<std::string, pointer>> out;
    out.reserve(by_key_.size());
    for (const auto& [key, e] : by_key_) out.emplace_back(key, e.consumer);
    return out;
  }

 private:
  struct entry {
    pointer consumer;
    std::set<std::string> channels;  // holders
  };

  template <class Make>
  entry& entry_locked(const std::string& key, Make&& make, bool& created) {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) {
      it = by_key_.emplace(key, entry{pointer(std::forward<Make>(make)()), {}}).first;
      created = true;
    }
    return it->second;
  }

  // Unbinds channel from key; the consumer when that was its last holder (removed), else null.
  pointer unbind_locked(const std::string& channel, const std::string& key) {
    key_by_channel_.erase(channel);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return nullptr;
    it->second.channels.erase(channel);
    if (!it->second.channels.empty()) return nullptr;
    auto consumer = std::move(it->second.consumer);
    by_key_.erase(it);
    return consumer;
  }

  std::optional<xconn::sdk::host> host_;
  // Held across a change and its host call, so the host sees a channel's acquires and releases in the order made
  // here; the state lock below is not (take, from the host's consumer_stop, never waits on a host call).
  std::mutex host_order_;
  mutable std::mutex mutex_;
  std::map<std::string, entry> by_key_;                  // consumers by key; an opened one may have no holder
  std::map<std::string, std::string> key_by_channel_;    // channel -> key of the consumer it holds
};

}  // namespace xconn::adapter
