// The whole host: store, keys, plugins, listener and I/O threads, started and stopped in order.
#pragma once

#include "core/base/config.hpp"

#include <boost/system/result.hpp>

#include <memory>
#include <string>

namespace xconn {

class server {
 public:
  explicit server(config cfg);
  ~server();  // stops if still running
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // The binary's version and revision, shown as xconn_build_info in /metrics (before start).
  void set_build(std::string version, std::string revision);

  // Opens the store, loads the keys and plugins, binds and starts serving. Returns an error line, or ""
  // once the listener accepts.
  std::string start();

  // Stops accepting, closes data-plane sockets with 1001, stops plugins, flushes the store, joins the
  // threads. Idempotent; safe from any thread except an I/O thread.
  void stop();

  // Compares plugins.dir with what is loaded and reloads, adds and removes to match, in the background
  // (SIGHUP; the watcher does the same by itself when plugins.watch is on).
  void rescan_plugins();

  // Reads the YAML again and applies what changed (SIGHUP): changed plugin sections hot-reload, an invalid file
  // changes nothing, restart-only keys are reported; then rescans plugins.dir. In the background; the log says.
  void reload_config();

  unsigned short port() const;
  const std::string& base_url() const;  // public base, e.g. http://127.0.0.1:8840
  const std::string& key_file() const;  // where a generated key lives ("" when keys are configured)
  const config& settings() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace xconn
