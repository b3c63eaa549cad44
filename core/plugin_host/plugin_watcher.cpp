#include "core/plugin_host/plugin_watcher.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <sys/inotify.h>
#include <unistd.h>

namespace xconn {

plugin_watcher::plugin_watcher(boost::asio::io_context& io, std::filesystem::path dir, std::function<void()> changed)
    : dir_(std::move(dir)),
      changed_(std::move(changed)),
      strand_(boost::asio::make_strand(io)),
      events_(strand_),
      settle_timer_(strand_) {}

plugin_watcher::~plugin_watcher() = default;

std::string plugin_watcher::start() {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return std::string("inotify: ") + std::strerror(errno);
  // Close-after-write ends a copy in place; moves and deletes are whole-file changes; create and modify restart
  // the settle time while a copy is still being written.
  constexpr uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_MODIFY |
                            IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;
  if (inotify_add_watch(fd, dir_.c_str(), mask) < 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    return "cannot watch " + dir_.string() + ": " + err;
  }
  events_.assign(fd);
  boost::asio::post(strand_, [this] { read(); });
  return {};
}

void plugin_watcher::stop() {
  std::promise<void> closed;
  boost::asio::post(strand_, [this, &closed] {
    stopped_ = true;
    boost::system::error_code ignored;
    events_.close(ignored);
    settle_timer_.cancel();
    closed.set_value();
  });
  closed.get_future().wait();
}

void plugin_watcher::read() {
  if (stopped_) return;
  events_.async_read_some(boost::asio::buffer(buffer_),
                          [this](boost::system::error_code ec, std::size_t bytes) { on_read(ec, bytes); });
}

void plugin_watcher::on_read(boost::system::error_code ec, std::size_t bytes) {
  if (stopped_ || ec == boost::asio::error::operation_aborted) return;
  if (ec) {
    spdlog::error("watching {} stopped: {}", dir_.string(), ec.message());
    return;
  }
  bool relevant = false;
  for (std::size_t at = 0; at + sizeof(inotify_event) <= bytes;) {
    inotify_event event;
    std::memcpy(&event, buffer_.data() + at, sizeof event);
    std::string_view name(buffer_.data() + at + sizeof event, event.len);
    name = name.substr(0, name.find('\0'));
    if (event.mask & (IN_DELETE_SELF | IN_MOVE_SELF))
      spdlog::error("plugins.dir {} was removed or moved: it is no longer watched", dir_.string());
    if (event.mask & IN_Q_OVERFLOW) relevant = true;  // events were lost: look at everything
    if (name.ends_with(".so")) relevant = true;
    at += sizeof event + event.len;
  }
  if (relevant) {
    settle_timer_.expires_after(settle);
    settle_timer_.async_wait([this](boost::system::error_code wait_ec) {
      if (!wait_ec && !stopped_) changed_();
    });
  }
  read();
}

}  // namespace xconn
