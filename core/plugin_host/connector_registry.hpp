// Every plugin loaded from plugins.dir, by plugin id; every file that was refused and why; and the reloads
// that keep the first in step with the folder (docs/architecture.md "Hot reload").
//
// Loading, reloading and removing run on one reload thread of their own, one at a time: they wait on a
// plugin's start and stop, which must never hold an I/O thread or a plugin pool thread.
#pragma once

#include "core/base/config.hpp"
#include "core/plugin_host/connector.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace xconn {

// A file in plugins.dir that does not serve (or a new build that was not taken), with the logged reason.
struct refused_plugin {
  std::string file;
  std::string plugin_id;  // from the file name; may not be a valid id
  std::string reason;
};

class connector_registry {
 public:
  static constexpr std::size_t max_plugins = 16;
  static constexpr std::chrono::seconds start_limit{5};
  static constexpr std::chrono::seconds stop_limit{5};

  // What the registry tells the rest of the host, each from the thread that loaded or reloaded the plugin.
  struct events {
    // After a plugin was loaded and started (at start-up, or added later).
    std::function<void(connector&)> added;
    // After a reload that took a new generation (its card may differ).
    std::function<void(const std::string& plugin_id)> reloaded;
    // When a removed plugin's calls have drained: its sockets close (1001).
    std::function<void(const std::string& plugin_id)> removed;
  };

  // hooks: where the plugins' calls into the host go.
  connector_registry(const config& cfg, boost::asio::io_context& io, boost::asio::thread_pool& pool,
                     plugin_host_hooks hooks = {}, events told = {});
  ~connector_registry();


  // Loads, validates, creates and starts every candidate in plugins.dir (blocking; at start-up).
  void load_all();
  // Queues a comparison of plugins.dir with what is loaded: new files load, changed ones reload, missing
  // ones are removed (the watcher, SIGHUP). Several requests before it runs make one.
  void rescan();
  // Queues a reload of one plugin from its file even when unchanged (POST /connectors/{id}/reload). False
  // when the id is neither loaded nor a file in plugins.dir.
  bool request_reload(const std::string& plugin_id);
  // Whether plugin_id is loaded or a file of plugins.dir (what a reload of it can find).
  bool knows(const std::string& plugin_id) const;
  // Waits for the queued reloads (tests, and shutdown's first step).
  void wait_idle();

  // A configuration reload (SIGHUP, POST /admin/reload) runs as a task on the reload thread, after whatever was
  // queued before it; it may call the members marked "reload thread" below.
  void run_on_reload_thread(std::function<void()> task) { queue(std::move(task)); }
  // Reload thread: the plugins (loaded, or configured) whose section in next differs from the one they serve with.
  struct section_changes {
    std::vector<std::string> changed, unchanged;
  };
  section_changes compare_sections(const std::map<std::string, connector_section>& next) const;
  // Reload thread: reloads plugin_id from its unchanged file with section, the same no-drop swap as a new build.
  // When the plugin refuses the section, the old one keeps serving (last_reload and refused say why).
  void reconfigure(const std::string& plugin_id, const connector_section& section);
  // Reload thread: what rescan() and request_reload() queue, done now ("" compares the folder, an id reloads it).
  void sync_now(const std::string& forced_id) { sync_dir(forced_id); }
  // Refuses further reloads, waits for a running one, stops every plugin within its limit (at shutdown).
  void stop_all();

  std::shared_ptr<connector> find(std::string_view plugin_id) const;
  std::vector<std::shared_ptr<connector>> all() const;
  std::vector<refused_plugin> refused() const;

 private:
  void refuse(const std::filesystem::path& file, std::string reason);
  void clear_refusal(const std::string& plugin_id);
  // The .so files of plugins.dir that plugins.allow admits, sorted; nothing when the folder cannot be read.
  std::optional<std::vector<std::filesystem::path>> candidates() const;
  const connector_section& section_of(const std::string& plugin_id) const;
  // Loads file as a generation of conn configured with section (not started); the error is one line for the log.
  boost::system::result<std::shared_ptr<plugin_generation>, std::string> prepare(const std::filesystem::path& file,
                                                                                 const std::shared_ptr<connector>& conn,
                                                                                 const connector_section& section);
  void add(const std::filesystem::path& file);
  void replace(const std::shared_ptr<connector>& conn, const std::filesystem::path& file, bool forced,
               const connector_section& section);
  void remove(const std::shared_ptr<connector>& conn);
  void sync_dir(const std::string& forced_id);
  void queue(std::function<void()> task);

  const config& config_;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;
  std::filesystem::path cache_dir_;
  plugin_host_hooks hooks_;
  events told_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<connector>, std::less<>> loaded_;
  std::vector<refused_plugin> refused_;
  // Reload thread only: the bytes last refused per id, so an unchanged bad file is not retried on every event.
  std::map<std::string, std::string> refused_sha_;
  // Reload thread: each plugin's section as it serves (a reload of the YAML replaces one only when it is taken).
  std::map<std::string, connector_section> sections_;
  std::uint64_t next_generation_ = 1;
  boost::asio::thread_pool reload_thread_{1};
  std::atomic<bool> rescan_queued_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace xconn
