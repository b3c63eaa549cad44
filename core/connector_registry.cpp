#include "core/connector_registry.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace xconn {

connector_registry::connector_registry(const config& cfg, boost::asio::io_context& io,
                                       boost::asio::thread_pool& pool)
    : config_(cfg), io_(io), pool_(pool) {}

void connector_registry::refuse(const std::filesystem::path& file, std::string reason) {
  spdlog::error("plugin {} refused: {}", file.filename().string(), reason);
  std::lock_guard lock(mutex_);
  refused_.push_back({file.string(), file.stem().string(), std::move(reason)});
}

void connector_registry::load_all() {
  std::filesystem::path dir(config_.plugins.dir);
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    if (it->path().extension() == ".so" && it->is_regular_file()) files.push_back(it->path());
  if (ec) spdlog::error("plugins.dir {}: {}", dir.string(), ec.message());
  std::sort(files.begin(), files.end());
  auto cache = std::filesystem::path(config_.store.path) / "plugin-cache";

  for (const auto& file : files) {
    std::string id = file.stem().string();
    const auto& allow = config_.plugins.allow;
    if (!allow.empty() && std::find(allow.begin(), allow.end(), id) == allow.end()) {
      spdlog::info("plugin {} skipped: not in plugins.allow", file.filename().string());
      continue;
    }
    if (!valid_plugin_id(id)) {
      refuse(file, "the file name is not a plugin id (1-32 of a-z 0-9 -)");
      continue;
    }
    if (loaded_.size() >= max_plugins) {
      refuse(file, "at most " + std::to_string(max_plugins) + " plugins are loaded");
      continue;
    }
    auto library = load_plugin_library(file, cache);
    if (!library) {
      refuse(file, library.error());
      continue;
    }
    const auto& manifest = (*library)->manifest;
    bool duplicate = std::any_of(loaded_.begin(), loaded_.end(),
                                 [&](auto& kv) { return kv.second->manifest().card_id == manifest.card_id; });
    if (duplicate) {
      refuse(file, "connector_card_id " + manifest.card_id + " is already served by another plugin");
      continue;
    }
    static const connector_section empty_section;
    auto section_it = config_.connectors.find(id);
    const auto& section = section_it == config_.connectors.end() ? empty_section : section_it->second;
    auto conn = std::make_shared<connector>(*library, section, next_generation_++, io_, pool_);
    std::string error;
    if (!conn->create(error)) {
      // The plugin names the key ("config.greeting: ..."); add where it is in the file.
      std::string key = error.substr(0, error.find(':'));
      auto line = section.key_lines.find(key);
      std::string where = "connectors." + id + "." + error;
      if (line != section.key_lines.end())
        where = (config_.source_path.empty() ? std::string("<config>") : config_.source_path) + ":" +
                std::to_string(line->second) + ": " + where;
      refuse(file, "config rejected: " + where);
      continue;
    }
    if (health_listener_) {
      conn->on_health_change([listener = health_listener_, id](health_state h) { listener(id, h); });
    }
    if (emit_handler_) conn->on_emit(emit_handler_);
    conn->on_consumers(consumer_handlers_);
    conn->on_files(files_);
    auto started = conn->start(start_limit);
    if (!started.ok) {
      refuse(file, "start failed: " + (started.code.empty() ? std::string("error") : started.code) +
                       (started.thrown ? " (threw: " + started.message + ")" : ""));
      conn->stop(stop_limit);
      continue;
    }
    spdlog::info("plugin {} loaded: card {} version {} generation {} config_digest {}", id, manifest.card_id,
                 manifest.card_version, conn->generation(), conn->config_digest());
    std::lock_guard lock(mutex_);
    loaded_.emplace(id, std::move(conn));
  }
  for (const auto& [id, section] : config_.connectors)
    if (!loaded_.count(id)) spdlog::warn("connectors.{} is configured but no such plugin is loaded", id);
}

void connector_registry::stop_all() {
  std::map<std::string, std::shared_ptr<connector>, std::less<>> loaded;
  {
    std::lock_guard lock(mutex_);
    loaded.swap(loaded_);
  }
  for (auto& [id, conn] : loaded) {
    auto r = conn->stop(stop_limit);
    if (!r.ok) spdlog::warn("plugin {} stop: {}", id, r.code);
    else spdlog::info("plugin {} stopped", id);
  }
}

std::shared_ptr<connector> connector_registry::find(std::string_view plugin_id) const {
  std::lock_guard lock(mutex_);
  auto it = loaded_.find(plugin_id);
  return it == loaded_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<connector>> connector_registry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<connector>> out;
  for (auto& [id, c] : loaded_) out.push_back(c);
  return out;
}

std::vector<refused_plugin> connector_registry::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

}  // namespace xconn
