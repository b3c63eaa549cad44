#include "core/store/plugin_kv.hpp"

#include <system_error>

namespace xconn {

std::string plugin_kv_key(std::string_view plugin_id, std::string_view key) {
  std::string k;
  k.reserve(plugin_id.size() + 1 + key.size());
  k.append(plugin_id).push_back('\0');
  k.append(key);
  return k;
}

std::optional<std::string> plugin_kv::get(std::string_view plugin_id, std::string_view key) const {
  return db_.get(database, plugin_kv_key(plugin_id, key));
}

std::size_t plugin_kv::scan(std::string_view plugin_id, std::string_view prefix,
                            const std::function<bool(std::string_view key, std::string_view value)>& visit) const {
  const std::size_t skip = plugin_id.size() + 1;
  std::size_t visited = 0;
  db_.scan(database, plugin_kv_key(plugin_id, prefix), [&](std::string_view key, std::string_view value) {
    ++visited;
    return visit(key.substr(skip), value);
  });
  return visited;
}

plugin_kv::usage& plugin_kv::usage_of(const std::string& plugin_id) {
  auto it = usage_.find(plugin_id);
  if (it != usage_.end()) return it->second;
  usage u;
  scan(plugin_id, "", [&](std::string_view key, std::string_view value) {
    auto bytes = key.size() + value.size();
    u.sizes.emplace(std::string(key), bytes);
    u.total += bytes;
    return true;
  });
  return usage_.emplace(plugin_id, std::move(u)).first->second;
}

std::optional<kv_error> plugin_kv::stage(const std::string& plugin_id, const std::vector<kv_op>& ops,
                                         write_batch& batch) {
  if (ops.size() > max_ops_per_write)
    return kv_error{"invalid_argument", "at most " + std::to_string(max_ops_per_write) + " ops per write"};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    auto where = "op " + std::to_string(i) + ": ";
    if (op.key.empty() || op.key.size() > max_key_bytes)
      return kv_error{"invalid_argument", where + "a key is 1.." + std::to_string(max_key_bytes) + " bytes"};
    if (!op.erase && op.value.size() > max_value_bytes)
      return kv_error{"invalid_argument", where + "a value is at most " + std::to_string(max_value_bytes) + " bytes"};
  }
  std::lock_guard lock(mutex_);
  auto& u = usage_of(plugin_id);
  // The batch's effect on the usage, op by op (a later op on the same key replaces an earlier one).
  std::map<std::string_view, std::uint64_t> after;
  std::uint64_t total = u.total;
  for (const auto& op : ops) {
    auto earlier = after.find(op.key);
    std::uint64_t before = 0;
    if (earlier != after.end()) {
      before = earlier->second;
    } else if (auto known = u.sizes.find(op.key); known != u.sizes.end()) {
      before = known->second;
    }
    std::uint64_t now = op.erase ? 0 : op.key.size() + op.value.size();
    total = total - before + now;
    after[op.key] = now;
  }
  if (total > u.total && total > quota_bytes_)
    return kv_error{"kv_quota_exceeded", "the plugin's store would hold " + std::to_string(total) + " bytes, over its " +
                                             std::to_string(quota_bytes_) + "-byte quota (plugins.kv_quota_bytes)"};
  for (const auto& [key, bytes] : after) {
    if (bytes == 0) {
      if (auto it = u.sizes.find(key); it != u.sizes.end()) u.sizes.erase(it);
    } else {
      u.sizes.insert_or_assign(std::string(key), bytes);
    }
  }
  u.total = total;
  std::string db_name(database);
  for (const auto& op : ops) {
    if (op.erase)
      batch.erase(db_name, plugin_kv_key(plugin_id, op.key));
    else
      batch.put(db_name, plugin_kv_key(plugin_id, op.key), op.value);
  }
  return std::nullopt;
}

void plugin_kv::write(const std::string& plugin_id, const std::vector<kv_op>& ops,
                      std::function<void(std::optional<kv_error>)> done) {
  write_batch batch;
  if (auto refused = stage(plugin_id, ops, batch)) return done(std::move(refused));
  db_.write(std::move(batch), [this, plugin_id, done = std::move(done)](std::error_code ec) {
    if (!ec) return done(std::nullopt);
    forget(plugin_id);
    done(kv_error{"store_failed", "the host could not store the write"});
  });
}

void plugin_kv::forget(const std::string& plugin_id) {
  std::lock_guard lock(mutex_);
  usage_.erase(plugin_id);
}

std::uint64_t plugin_kv::used_bytes(const std::string& plugin_id) {
  std::lock_guard lock(mutex_);
  return usage_of(plugin_id).total;
}

}  // namespace xconn
