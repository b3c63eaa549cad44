// Each plugin's own key-value store (plugin.h xconn_host_kv_*, docs/plugin-api.md "State"): one LMDB database,
// keys "{plugin_id}\0{key}", so a plugin reads and writes only its own. Writes are checked against the size
// limits and the plugin's quota before they are queued; an emit adds them to its own batch (stage), so a cursor
// and the messages read before it commit together.
#pragma once

#include "core/store/store.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

struct kv_op {
  bool erase = false;
  std::string key;
  std::string value;
};

// Why a write was refused: invalid_argument, kv_quota_exceeded or store_failed, and a message without the values.
struct kv_error {
  std::string code;
  std::string message;
};

class plugin_kv {
 public:
  static constexpr std::string_view database = "plugin_kv";
  static constexpr std::size_t max_key_bytes = 512;
  static constexpr std::size_t max_value_bytes = 64 * 1024;
  static constexpr std::size_t max_ops_per_write = 1024;

  plugin_kv(store& db, std::uint64_t quota_bytes) : db_(db), quota_bytes_(quota_bytes) {}

  std::optional<std::string> get(std::string_view plugin_id, std::string_view key) const;
  // Visits the plugin's keys starting with prefix, in byte order; visit returns false to stop. Returns the count.
  std::size_t scan(std::string_view plugin_id, std::string_view prefix,
                   const std::function<bool(std::string_view key, std::string_view value)>& visit) const;

  // Checks ops and appends them to batch, counting their bytes against the quota; nothing is appended when one
  // is refused. The caller queues the batch, and calls forget() if its commit fails.
  std::optional<kv_error> stage(const std::string& plugin_id, const std::vector<kv_op>& ops, write_batch& batch);
  // Stages and commits ops alone; done runs once on the store's writer thread (or here when refused).
  void write(const std::string& plugin_id, const std::vector<kv_op>& ops,
             std::function<void(std::optional<kv_error>)> done);
  // Drops what is known of the plugin's usage (a staged batch failed): it is read again from the store.
  void forget(const std::string& plugin_id);

  // Bytes of keys and values the plugin holds, staged writes included.
  std::uint64_t used_bytes(const std::string& plugin_id);

 private:
  struct usage {
    std::map<std::string, std::uint64_t, std::less<>> sizes;  // key -> key + value bytes
    std::uint64_t total = 0;
  };
  usage& usage_of(const std::string& plugin_id);  // under mutex_

  store& db_;
  std::uint64_t quota_bytes_;
  std::mutex mutex_;
  std::map<std::string, usage, std::less<>> usage_;
};

// The LMDB key of a plugin's key.
std::string plugin_kv_key(std::string_view plugin_id, std::string_view key);

}  // namespace xconn
