// Watches plugins.dir with inotify (through Asio, no polling) and reports, once things settle, that a `.so`
// there was added, replaced (renamed over, or copied in place) or removed.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace xconn {

class plugin_watcher {
 public:
  // A change is reported once no event came for this long: a copy in place writes in many steps, and the
  // file is read only when it has stopped changing.
  static constexpr std::chrono::milliseconds settle{300};

  plugin_watcher(boost::asio::io_context& io, std::filesystem::path dir, std::function<void()> changed);
  ~plugin_watcher();
  plugin_watcher(const plugin_watcher&) = delete;
  plugin_watcher& operator=(const plugin_watcher&) = delete;

  // Returns an error line, or "" once the folder is watched.
  std::string start();
  // No report after this returns (blocking until the watcher's strand has closed it).
  void stop();

 private:
  void read();
  void on_read(boost::system::error_code ec, std::size_t bytes);

  std::filesystem::path dir_;
  std::function<void()> changed_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::posix::stream_descriptor events_;
  boost::asio::steady_timer settle_timer_;
  alignas(8) std::array<char, 16 * 1024> buffer_{};
  bool stopped_ = false;
};

}  // namespace xconn
