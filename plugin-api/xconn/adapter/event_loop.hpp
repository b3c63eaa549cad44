// The plugin's event loop: an io_context that drops what it still holds once the thread running it has returned.
// A handler left queued at stop (a coroutine waiting for its turn, or a pending read or timer with the frame that
// awaits it) holds the host's call that coroutine answers. Never run nor destroyed, that call would keep the
// plugin's generation, and with it this instance, its thread and its library, alive for good (a cycle). Dropped,
// each frame goes, and its completion answers the call plugin_dropped_call (retryable): the docs/plugin-api.md rule
// that stop answers or drops every call in flight.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <mutex>
#include <utility>

namespace xconn::adapter {

class event_loop : public boost::asio::io_context {
 public:
  // Once the thread running it has returned: destroys every queued handler and pending operation now (as the
  // io_context's destructor would), and from then on whatever post_or_drop or unless_dropped hands it.
  void drop_pending() {
    std::lock_guard lock(drop_mutex_);
    dropped_ = true;
    shutdown();  // idempotent; a handler destroyed here may post its frame's unwinding: destroyed in the same pass
  }

  // A handler from another thread (a host callback resuming a coroutine): queued, or destroyed at once when the
  // loop was dropped, so a host answer coming after stop cannot hold a call again.
  template <class Handler>
  void post_or_drop(Handler handler) {
    std::lock_guard lock(drop_mutex_);
    boost::asio::post(*this, std::move(handler));
    if (dropped_) shutdown();
  }

  // Runs queue() (which hands the loop new work) unless the loop was dropped; false when it was.
  template <class Queue>
  bool unless_dropped(Queue queue) {
    std::lock_guard lock(drop_mutex_);
    if (dropped_) return false;
    queue();
    return true;
  }

 private:
  // Recursive: a completion destroyed under it answers the host, which may call the plugin again on this thread.
  std::recursive_mutex drop_mutex_;
  bool dropped_ = false;
};

}  // namespace xconn::adapter
