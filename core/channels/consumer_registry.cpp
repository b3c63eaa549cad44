#include "core/channels/consumer_registry.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace xconn {

bool consumer_registry::valid_key(std::string_view key) {
  if (key.empty() || key.size() > max_key_bytes) return false;
  for (char c : key) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

std::string consumer_registry::record_key(std::string_view plugin_id, std::string_view channel_id,
                                          std::string_view consumer_key) {
  std::string out;
  out.reserve(plugin_id.size() + channel_id.size() + consumer_key.size() + 2);
  out.append(plugin_id).push_back('\n');
  out.append(channel_id).push_back('\n');
  out.append(consumer_key);
  return out;
}

void consumer_registry::persist(write_batch batch) {
  // Fire and forget: the completion runs on the writer thread and only logs. A lost record means a restart
  // forgets (or keeps) one reference; memory stays right until then.
  db_.write(std::move(batch), [](std::error_code ec) {
    if (ec) spdlog::error("shared consumer references could not be stored: {}", ec.message());
  });
}

std::size_t consumer_registry::load() {
  std::map<std::string, plugin_refs, std::less<>> loaded;
  std::size_t count = 0;
  db_.scan(database, "", [&](std::string_view key, std::string_view) {
    std::size_t first = key.find('\n');
    std::size_t second = first == std::string_view::npos ? first : key.find('\n', first + 1);
    if (second == std::string_view::npos) {
      spdlog::warn("a malformed shared consumer record was skipped");
      return true;
    }
    std::string_view plugin = key.substr(0, first);
    std::string_view channel = key.substr(first + 1, second - first - 1);
    std::string_view consumer = key.substr(second + 1);
    if (!valid_key(plugin) || !valid_key(channel) || !valid_key(consumer)) {
      spdlog::warn("a malformed shared consumer record was skipped");
      return true;
    }
    plugin_refs& refs = loaded[std::string(plugin)];
    refs.holders[std::string(consumer)].emplace(channel);
    refs.by_channel[std::string(channel)].emplace(consumer);
    ++count;
    return true;
  });
  std::lock_guard lock(mutex_);
  plugins_ = std::move(loaded);
  return count;
}

int consumer_registry::acquire(const std::string& plugin_id, const std::string& channel_id,
                               const std::string& consumer_key) {
  if (!valid_key(plugin_id) || !valid_key(channel_id) || !valid_key(consumer_key)) return -1;
  std::lock_guard lock(mutex_);
  plugin_refs& refs = plugins_[plugin_id];
  key_set& holders = refs.holders[consumer_key];
  if (holders.emplace(channel_id).second) {
    refs.by_channel[channel_id].emplace(consumer_key);
    persist(write_batch{}.put(std::string(database), record_key(plugin_id, channel_id, consumer_key), ""));
  }
  return static_cast<int>(holders.size());
}

bool consumer_registry::release(const std::string& plugin_id, const std::string& channel_id,
                                const std::string& consumer_key) {
  std::lock_guard lock(mutex_);
  auto plugin = plugins_.find(plugin_id);
  if (plugin == plugins_.end()) return false;
  plugin_refs& refs = plugin->second;
  auto holders = refs.holders.find(consumer_key);
  if (holders == refs.holders.end() || holders->second.erase(channel_id) == 0) return false;
  auto channel = refs.by_channel.find(channel_id);
  if (channel != refs.by_channel.end()) {
    channel->second.erase(consumer_key);
    if (channel->second.empty()) refs.by_channel.erase(channel);
  }
  persist(write_batch{}.erase(std::string(database), record_key(plugin_id, channel_id, consumer_key)));
  bool last = holders->second.empty();
  if (last) refs.holders.erase(holders);
  if (refs.holders.empty()) plugins_.erase(plugin);
  return last;
}

std::vector<std::string> consumer_registry::release_channel(const std::string& plugin_id,
                                                            const std::string& channel_id) {
  std::vector<std::string> zeroed;
  std::lock_guard lock(mutex_);
  auto plugin = plugins_.find(plugin_id);
  if (plugin == plugins_.end()) return zeroed;
  plugin_refs& refs = plugin->second;
  auto channel = refs.by_channel.find(channel_id);
  if (channel == refs.by_channel.end()) return zeroed;
  write_batch batch;
  for (const std::string& key : channel->second) {
    batch.erase(std::string(database), record_key(plugin_id, channel_id, key));
    auto holders = refs.holders.find(key);
    if (holders == refs.holders.end()) continue;
    holders->second.erase(channel_id);
    if (holders->second.empty()) {
      refs.holders.erase(holders);
      zeroed.push_back(key);
    }
  }
  refs.by_channel.erase(channel);
  persist(std::move(batch));
  if (refs.holders.empty()) plugins_.erase(plugin);
  return zeroed;
}

std::size_t consumer_registry::live(std::string_view plugin_id) const {
  std::lock_guard lock(mutex_);
  auto plugin = plugins_.find(plugin_id);
  return plugin == plugins_.end() ? 0 : plugin->second.holders.size();
}

std::size_t consumer_registry::references(std::string_view plugin_id, std::string_view consumer_key) const {
  std::lock_guard lock(mutex_);
  auto plugin = plugins_.find(plugin_id);
  if (plugin == plugins_.end()) return 0;
  auto holders = plugin->second.holders.find(consumer_key);
  return holders == plugin->second.holders.end() ? 0 : holders->second.size();
}

std::vector<std::string> consumer_registry::keys(std::string_view plugin_id) const {
  std::vector<std::string> out;
  std::lock_guard lock(mutex_);
  auto plugin = plugins_.find(plugin_id);
  if (plugin == plugins_.end()) return out;
  for (const auto& [key, holders] : plugin->second.holders) out.push_back(key);
  return out;
}

std::vector<std::string> consumer_registry::keys_of(std::string_view plugin_id, std::string_view channel_id) const {
  std::lock_guard lock(mutex_);
  auto plugin = plugins_.find(plugin_id);
  if (plugin == plugins_.end()) return {};
  auto channel = plugin->second.by_channel.find(channel_id);
  if (channel == plugin->second.by_channel.end()) return {};
  return {channel->second.begin(), channel->second.end()};
}

std::vector<std::pair<std::string, std::string>> consumer_registry::channels() const {
  std::vector<std::pair<std::string, std::string>> out;
  std::lock_guard lock(mutex_);
  for (const auto& [plugin, refs] : plugins_) {
    for (const auto& [channel, keys] : refs.by_channel) out.emplace_back(plugin, channel);
  }
  return out;
}

}  // namespace xconn
