// Shared provider consumers, the third owner of the offline lease (spec "Connector Server Offline Lease";
// docs/plugin-contract.md "Shared consumers"): one target consumer (a bot token's poller, an app's event stream)
// serves every channel signed in with that credential. This registry counts, per plugin, which channels hold
// which consumer_key, keeps each reference in LMDB so the counts survive a restart, and says when the last
// reference of a key went, so that the caller tells the plugin to stop that consumer exactly once.
//
// It checks its own references only: it is never told "the connector is gone, stop everything"; a connector
// that goes away deregisters its channels, and each channel's release_channel does the counting.
//
// A consumer_key names a credential without being it (the host's HMAC of it, consumer_key.hpp; an app id): 1-128
// bytes of printable ASCII. Keys a build before ABI 1.5 stored (a bare SHA-256) are released by the plugin when it
// restores the channel under the new key.
// Records: database "consumers", key "<plugin>\n<channel>\n<consumer_key>", value "".
//
// Thread-safe behind one mutex (plugin threads and I/O threads call it); it never waits on a disk: each change
// is queued with store::write (group commit) in the order it was made, and a failed commit is logged.
#pragma once

#include "core/store/store.hpp"

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xconn {

class consumer_registry {
 public:
  static constexpr std::string_view database = "consumers";
  static constexpr std::size_t max_key_bytes = 128;

  explicit consumer_registry(store& db) : db_(db) {}
  consumer_registry(const consumer_registry&) = delete;
  consumer_registry& operator=(const consumer_registry&) = delete;

  // 1-128 bytes, each printable ASCII (0x20-0x7e). Plugin and channel ids follow the same rule here.
  static bool valid_key(std::string_view key);

  // Replaces what is in memory with the references in LMDB (at start, before any acquire); returns how many
  // references it read. A malformed record is skipped with a warning.
  std::size_t load();

  // A channel of plugin_id holds consumer_key (idempotent per channel+key: a repeat writes nothing). Returns how
  // many channels hold it now (1: the first, start it), or -1 for an invalid plugin id, channel id or key, in
  // which case nothing is stored.
  int acquire(const std::string& plugin_id, const std::string& channel_id, const std::string& consumer_key);

  // Drops that reference; true when it was the last one (the caller tells the plugin to stop it). False when the
  // channel did not hold the key (so a repeat, or a release after release_channel, is false).
  bool release(const std::string& plugin_id, const std::string& channel_id, const std::string& consumer_key);

  // The channel ended (signed out or deregistered): drops all its references; returns the keys that reached
  // zero (each to be stopped), in key order.
  std::vector<std::string> release_channel(const std::string& plugin_id, const std::string& channel_id);

  std::size_t live(std::string_view plugin_id) const;  // consumers with at least one reference
  std::size_t references(std::string_view plugin_id, std::string_view consumer_key) const;
  // The keys of plugin_id with at least one reference, in key order (after a restart the plugin starts with no
  // consumer running while these are still held).
  std::vector<std::string> keys(std::string_view plugin_id) const;
  // The consumer keys channel_id holds, in key order.
  std::vector<std::string> keys_of(std::string_view plugin_id, std::string_view channel_id) const;
  // Every (plugin, channel) that holds a reference, in order: after load, a channel that no longer exists (gone
  // while the host was down) is the caller's to release_channel.
  std::vector<std::pair<std::string, std::string>> channels() const;

  static std::string record_key(std::string_view plugin_id, std::string_view channel_id,
                                std::string_view consumer_key);

 private:
  using key_set = std::set<std::string, std::less<>>;
  struct plugin_refs {
    std::map<std::string, key_set, std::less<>> holders;  // consumer_key -> channels; no empty sets
    std::map<std::string, key_set, std::less<>> by_channel;  // channel -> consumer_keys; no empty sets
  };

  // Queues one change; called under mutex_ so the store sees changes in the order they were made.
  void persist(write_batch batch);

  store& db_;
  mutable std::mutex mutex_;
  std::map<std::string, plugin_refs, std::less<>> plugins_;  // no plugin without references
};

}  // namespace xconn
