#include "core/control/config_reload.hpp"

#include "core/base/config_diff.hpp"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace xconn {

config_reloader::config_reloader(const config& running, connector_registry& connectors)
    : running_(running), connectors_(connectors) {}

void config_reloader::reload(std::string only_plugin, std::function<void(reload_report)> told) {
  connectors_.run_on_reload_thread([this, only_plugin = std::move(only_plugin), told = std::move(told)] {
    // A configuration given as text (tests, embedders) has no file to read again: its sections stay as they are.
    // An emptied file is refused: applied, it would put every key back to its default and drop every plugin section.
    auto next = running_.source_path.empty() ? boost::system::result<config, config_error>(running_)
                                             : load_config(running_.source_path, empty_document::refused);
    if (!next) {
      ++invalid_;
      last_ok_ = false;
      reload_report report{next.error().what(), {}, {}, {}};
      spdlog::error("config reload: {}; nothing changed", report.error);
      return told(std::move(report));
    }
    ++applied_;
    last_ok_ = true;
    auto changes = connectors_.compare_sections(next->connectors);
    reload_report report{"", {}, {}, restart_only_changes(running_, *next)};
    if (only_plugin.empty()) {
      report.reloading = changes.changed;
      report.unchanged = changes.unchanged;
    } else {
      report.reloading = {only_plugin};
    }
    if (!report.restart_required.empty())
      spdlog::warn("config reload: {} changed but apply only at the next start", fmt::join(report.restart_required, ", "));
    spdlog::info("config reload: reloading [{}]", fmt::join(report.reloading, ", "));
    auto reloading = report.reloading;
    told(std::move(report));

    static const connector_section absent;
    for (const auto& id : reloading) {
      bool section_changed = std::count(changes.changed.begin(), changes.changed.end(), id) > 0;
      auto it = next->connectors.find(id);
      if (section_changed) connectors_.reconfigure(id, it == next->connectors.end() ? absent : it->second);
      else connectors_.sync_now(id);
    }
    if (only_plugin.empty()) connectors_.sync_now("");
  });
}

}  // namespace xconn
