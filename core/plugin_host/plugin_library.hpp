// One plugin shared library, opened with Boost.DLL and checked before any of its code is trusted.
#pragma once

#include "core/plugin_host/plugin_manifest.hpp"

#include <xconn/plugin.h>

#include <boost/dll/shared_library.hpp>
#include <boost/system/result.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace xconn {

// Closed (dlclose) when the last holder lets go; every object that may call into the plugin holds it.
struct plugin_library {
  boost::dll::shared_library library;
  // The plugin's table as this host reads it: the plugin's own bytes up to its struct_size, every later hook
  // NULL (a plugin built against an older 1.x header). api points here.
  xconn_plugin_api table{};
  const xconn_plugin_api* api = nullptr;
  plugin_manifest manifest;
  std::filesystem::path file;  // the file in plugins.dir it came from
  std::string sha256;          // of the file's bytes
};

// The sha256 of a file's bytes (hex), or nothing when it cannot be read.
std::optional<std::string> file_sha256(const std::filesystem::path& file);

// Refuses a build recorded as having crashed the process in its start (start_crash_records.hpp) and a file whose
// ELF layout does not lie inside it (elf_check.hpp: dlopen would die of SIGBUS), then writes the bytes it hashed to
// cache_dir/<sha256>.so (a new build never aliases one already loaded), opens it
// RTLD_LOCAL|RTLD_NOW, calls its entry with this host's API major and checks the table (same major, at least a
// 1.0 table, every Required hook, the Optional hooks its manifest's features need), the manifest and that the
// manifest id equals the file name. The error is one line fit for the log.
boost::system::result<std::shared_ptr<plugin_library>, std::string> load_plugin_library(
    const std::filesystem::path& file, const std::filesystem::path& cache_dir);

}  // namespace xconn
