// The base of a network adapter: a plugin with its own event loop on one thread, where every call to the target
// runs as a coroutine, and the host's callback services as awaitables on that loop.
//
//   class my_adapter final : public xconn::adapter::network_adapter {
//    public:
//     my_adapter(xconn::sdk::host host, std::string_view config) : network_adapter(host, "my_adapter") {}
//     ~my_adapter() override { halt(); }   // first: frames still queued use this class's members
//     void send(..., completion done) override { spawn(deliver(..., std::move(done))); }
//   };
//
// start() starts the thread; stop() (and halt()) stops the loop, joins the thread and drops what the loop still
// holds, so every call in flight is answered (a dropped frame's completion answers plugin_dropped_call, retryable),
// then on_halted() lets the adapter close what belongs to the loop (a connection pool).
#pragma once

#include <xconn/adapter/event_loop.hpp>
#include <xconn/adapter/guarded_spawn.hpp>
#include <xconn/plugin.hpp>

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace xconn::adapter {

class network_adapter : public xconn::sdk::plugin {
 public:
  using completion = xconn::sdk::completion;
  template <class T>
  using awaitable = boost::asio::awaitable<T>;

  // name: first in every log line the base writes (a coroutine's escaped exception).
  network_adapter(xconn::sdk::host host, std::string name) : host_(host), name_(std::move(name)) {}
  // A derived destructor calls halt() before its own members go (see the header comment); this one is the backstop.
  ~network_adapter() override { halt(); }
  network_adapter(const network_adapter&) = delete;
  network_adapter& operator=(const network_adapter&) = delete;

  void start(completion done) override {
    start_loop();
    done.ok();
  }
  void stop(completion done) override {
    halt();
    done.ok();
  }

 protected:
  // Starts the loop's thread (once).
  void start_loop() {
    std::lock_guard lock(life_mutex_);
    if (!runner_.joinable() && !halted_) runner_ = std::thread([this] { io_.run(); });
  }

  // Stops the loop, joins its thread, drops every frame it still holds (answering their calls), then on_halted().
  // Idempotent; never from the loop's own thread.
  void halt() {
    std::lock_guard lock(life_mutex_);
    if (halted_) return;
    halted_ = true;
    on_halting();
    work_.reset();
    io_.stop();
    if (runner_.joinable()) runner_.join();
    io_.drop_pending();
    on_halted();
  }

  // Before the loop stops: tell long-running work (a poller) to end. On the stopping thread.
  virtual void on_halting() {}
  // After every frame went: close what belongs to the loop (a pool's sockets). On the stopping thread.
  virtual void on_halted() {}

  // Runs work on the loop, guarded: an exception it lets out is logged (with the adapter's name), never thrown into
  // the loop. After stop it is dropped unstarted: a completion it holds answers plugin_dropped_call.
  void spawn(awaitable<void> work) {
    io_.unless_dropped([&] { spawn_guarded(io_, host_, name_, std::move(work)); });
  }

  // A host callback API as an awaitable: start(resume) gets a callback that resumes the coroutine with its value, on
  // the loop, from whatever thread the host calls it on. After stop the coroutine is dropped instead, so a host
  // answer coming late cannot hold a call. (The handler is shared once: the host's callbacks must be copyable.)
  template <class T, class Start>
  awaitable<T> host_call(Start start) {
    return boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(T)>(
        [this, start = std::move(start)](auto handler) mutable {
          auto h = std::make_shared<decltype(handler)>(std::move(handler));
          // h moves on with the answer: the posted handler holds the frame alone, so a loop dropped meanwhile
          // destroys it (answering its call) under post_or_drop, not later on whichever thread lets go of a copy.
          start([this, h](T value) mutable {
            if (!h) return;  // answered twice: the first one won
            io_.post_or_drop([h = std::move(h), value = std::move(value)]() mutable { (*h)(std::move(value)); });
          });
        },
        boost::asio::use_awaitable);
  }

  // The host's services, awaited on the loop.
  awaitable<xconn::sdk::emit_result> emit(std::string channel, std::string message_json) {
    return host_call<xconn::sdk::emit_result>([this, channel = std::move(channel),
                                               message = std::move(message_json)](auto resume) {
      host_.emit(channel, message, std::move(resume));
    });
  }
  // emit, with batch (a cursor) committed in the same transaction as the message.
  awaitable<xconn::sdk::emit_result> emit_with(std::string channel, std::string message_json,
                                               xconn::sdk::kv_batch batch) {
    return host_call<xconn::sdk::emit_result>([this, channel = std::move(channel), message = std::move(message_json),
                                               batch = std::move(batch)](auto resume) {
      host_.emit_with(channel, message, batch, std::move(resume));
    });
  }
  awaitable<xconn::sdk::kv_result> kv_write(xconn::sdk::kv_batch batch) {
    return host_call<xconn::sdk::kv_result>(
        [this, batch = std::move(batch)](auto resume) { host_.kv_write(batch, std::move(resume)); });
  }
  // Reads are answered at once by the host: plain calls.
  std::optional<std::string> kv_get(std::string_view key) const { return host_.kv_get(key); }
  void kv_scan(std::string_view prefix, std::function<bool(std::string_view, std::string_view)> visit) const {
    host_.kv_scan(prefix, std::move(visit));
  }
  // Stores bytes as a file of the channel without ever waiting for the store; the file item on success.
  awaitable<xconn::sdk::file_result> put_file(std::string channel, std::string filename, std::string mime_type,
                                              std::string bytes) {
    return host_call<xconn::sdk::file_result>([this, channel = std::move(channel), filename = std::move(filename),
                                               mime = std::move(mime_type), bytes = std::move(bytes)](auto resume) {
      host_.put_file_nowait(channel, filename, mime, std::move(bytes), std::move(resume));
    });
  }
  // A signed-in channel's later state (revoked, degraded with a reason, connected again); whether the host took it.
  bool set_channel_status(std::string_view channel, std::string_view status, std::string_view reason = {}) const {
    return host_.set_channel_status(channel, status, {}, reason);
  }
  std::string base_url() const { return host_.base_url(); }
  // A running tool call's progress: message (at most 200 bytes) and fraction 0..1; false when the host refused it.
  static bool progress(const completion& call, std::string_view message, double fraction) {
    return call.progress("{\"message\":" + xconn::sdk::json_quote(message) +
                         ",\"progress\":" + std::to_string(std::clamp(fraction, 0.0, 1.0)) + "}");
  }

  // Waits on the loop (a backoff, a poll's pause).
  awaitable<void> pause(std::chrono::steady_clock::duration wait) {
    boost::asio::steady_timer timer(io_, wait);
    co_await timer.async_wait(boost::asio::use_awaitable);
  }

  const xconn::sdk::host& host() const { return host_; }
  const std::string& name() const { return name_; }
  event_loop& io() { return io_; }

 private:
  friend class channel_checks;  // spawns its checks and pushes their outcome through the adapter
  friend class live_messages;  // waits out edit turns on the loop
  template <class Cursor>
  friend class poll_loop;  // emits its pages and keeps its cursor through the adapter

  xconn::sdk::host host_;
  std::string name_;
  event_loop io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{io_.get_executor()};
  std::thread runner_;
  std::mutex life_mutex_;
  bool halted_ = false;
};

}  // namespace xconn::adapter
