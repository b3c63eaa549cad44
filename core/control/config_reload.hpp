// Reading the YAML again while serving (SIGHUP, POST /admin/reload, POST {base}/reload; docs/operations.md):
// a plugin whose section changed is hot-reloaded with the new one, an invalid file changes nothing, and the keys
// only a restart applies are reported.
#pragma once

#include "core/base/config.hpp"
#include "core/plugin_host/connector_registry.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace xconn {

struct reload_report {
  std::string error;                   // the file is invalid ("<file>:<line>: <key>: <why>"): nothing changed
  std::vector<std::string> reloading;  // plugins being reloaded with their new section
  std::vector<std::string> unchanged;
  std::vector<std::string> restart_required;  // dotted keys that changed but apply at the next start
};

class config_reloader {
 public:
  // running: the configuration the server started with (its connectors sections are the registry's business).
  config_reloader(const config& running, connector_registry& connectors);

  // Reads the file again on the registry's reload thread. told runs there as soon as the changes are known; the
  // changed plugins are reloaded after it, one at a time. only_plugin "" applies every section and rescans
  // plugins.dir; a plugin id reloads that plugin alone (with its new section, or from its file when unchanged).
  void reload(std::string only_plugin, std::function<void(reload_report)> told);

  std::uint64_t applied() const { return applied_; }
  std::uint64_t invalid() const { return invalid_; }
  bool last_ok() const { return last_ok_; }

 private:
  const config& running_;
  connector_registry& connectors_;
  std::atomic<std::uint64_t> applied_{0};
  std::atomic<std::uint64_t> invalid_{0};
  std::atomic<bool> last_ok_{true};
};

}  // namespace xconn
