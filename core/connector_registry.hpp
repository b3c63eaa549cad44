// Every plugin loaded from plugins.dir, by plugin id, and every file that was refused and why.
#pragma once

#include "core/config.hpp"
#include "core/connector.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace xconn {

// A file in plugins.dir that does not serve, with the one-line reason that was logged.
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

  connector_registry(const config& cfg, boost::asio::io_context& io, boost::asio::thread_pool& pool);

  // Told of every health change of every plugin (from any thread). Set before load_all.
  void set_health_listener(std::function<void(const std::string& plugin_id, health_state)> listener) {
    health_listener_ = std::move(listener);
  }

  // Where every plugin's emits go. Set before load_all.
  void set_emit_handler(connector::emit_handler handler) { emit_handler_ = std::move(handler); }
  void set_consumer_handlers(connector::consumer_handlers handlers) { consumer_handlers_ = std::move(handlers); }
  void set_files(plugin_files* files) { files_ = files; }

  // Loads, validates, creates and starts every candidate in plugins.dir (blocking; at start-up).
  void load_all();
  // Stops every plugin within its limit and drops them (blocking; at shutdown).
  void stop_all();

  std::shared_ptr<connector> find(std::string_view plugin_id) const;
  std::vector<std::shared_ptr<connector>> all() const;
  std::vector<refused_plugin> refused() const;

 private:
  void refuse(const std::filesystem::path& file, std::string reason);

  const config& config_;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<connector>, std::less<>> loaded_;
  std::vector<refused_plugin> refused_;
  std::uint64_t next_generation_ = 1;
  std::function<void(const std::string&, health_state)> health_listener_;
  connector::emit_handler emit_handler_;
  connector::consumer_handlers consumer_handlers_;
  plugin_files* files_ = nullptr;
};

}  // namespace xconn
