// One plugin as the rest of the host sees it, stable across reloads: its id, its health, and calls into
// whichever generation serves now.
//
// A reload pauses dispatch (new calls are held, at most plugins.reload_pause_max_calls of them and for at most
// plugins.reload_pause_max_s; past either bound a call fails as retryable, as if the plugin had failed it),
// waits for the old generation's calls, swaps the generation, and sends the held calls, in order, to the new
// one. Sessions, channels and services hold the connector, never a generation, so they never notice.
#pragma once

#include "core/base/config.hpp"
#include "core/plugin_host/plugin_metrics.hpp"
#include "core/plugin_host/plugin_counters.hpp"
#include "core/plugin_host/plugin_generation.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <map>
#include <set>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace xconn {

// The outcome of the latest reload of one plugin, for /health and /connectors.
struct reload_record {
  long long at = 0;  // unix ms it finished
  bool ok = false;
  std::string reason;              // why it failed: one line, as logged
  std::uint64_t from_generation = 0;
  std::uint64_t to_generation = 0;  // = from_generation when it failed
  long long pause_ms = 0;           // dispatch paused
  long long longest_hold_ms = 0;    // the longest any held call waited
  std::size_t held_calls = 0;
  std::size_t failed_calls = 0;     // held past a bound and answered as failed
};

class connector : public std::enable_shared_from_this<connector> {
 public:
  using plugin_fn = plugin_generation::plugin_fn;
  using strand = plugin_generation::strand;

  connector(std::string id, const plugins_config& limits, boost::asio::io_context& io, boost::asio::thread_pool& pool);
  connector(const connector&) = delete;
  connector& operator=(const connector&) = delete;

  // Typed calls into the serving generation, one per plugin hook (plugin.h says what each passes and answers);
  // the only way the rest of the host reaches a plugin. Each runs on `on` (a channel's strand of the plugin
  // pool, so calls on one channel never overlap); done runs on an I/O thread, exactly once, within timeout
  // (plus the time a reload held it). An Optional hook the plugin's table lacks answers its plugin.h default.
  using done_fn = std::function<void(call_result)>;
  using ms = std::chrono::milliseconds;
  // progress: where the call's progress reports go (xconn_host_call_progress); empty refuses them.
  // answer_on: where done runs (default: any I/O thread).
  void invoke_tool(std::string channel_id, std::string tool_id, std::string arguments_json, std::string context_json,
                   const strand& on, ms timeout, done_fn done, plugin_generation::progress_fn progress = {},
                   boost::asio::any_io_executor answer_on = {});
  void auth_start(std::string channel_id, std::string flow_id, std::string run_id, std::string input_json,
                  const strand& on, ms timeout, done_fn done);
  void auth_status(std::string channel_id, std::string flow_id, std::string run_id, bool refresh, const strand& on,
                   ms timeout, done_fn done);
  void auth_cancel(std::string channel_id, std::string flow_id, std::string run_id, const strand& on, ms timeout,
                   done_fn done);
  void auth_logout(std::string channel_id, const strand& on, ms timeout, done_fn done);
  void send(std::string channel_id, std::string reply_json, const strand& on, ms timeout, done_fn done);
  void update(std::string channel_id, std::string message_id, std::string text_so_far, const strand& on, ms timeout,
              done_fn done);
  void activity(std::string channel_id, std::string status, std::string tool_name, const strand& on, ms timeout,
                done_fn done);
  // One request to a declared route: on_http_request when the plugin has it, else on_http (no headers then).
  struct http_call {
    std::string method, path, path_param, query, headers_json, body;
  };
  void http(http_call request, const strand& on, ms timeout, done_fn done);
  void consumer_stop(std::string consumer_key, const strand& on, ms timeout, done_fn done);
  // Whether the serving build verifies restored channels (plugin.h on_channel_restore).
  bool restores_channels() const;
  void channel_restore(std::string channel_id, std::string binding_json, std::string credentials_json,
                       const strand& on, ms timeout, done_fn done);
  // The channel ended for the plugin (plugin.h on_channel_end): "closed", "deregistered" or "expired". Failures
  // are logged.
  void channel_end(std::string channel_id, std::string reason, const strand& on, ms timeout);
  // consumer_stop for each consumer that lost its last channel reference; failures are logged.
  void stop_consumers(const std::vector<std::string>& keys, ms timeout);
  strand make_strand() { return boost::asio::make_strand(pool_); }

  const std::string& id() const { return id_; }
  // The serving generation's facts; hold the pointer, not a reference into it, across a possible reload.
  std::shared_ptr<const plugin_manifest> manifest() const;
  std::uint64_t generation() const;
  std::string config_digest() const;
  std::shared_ptr<plugin_generation> current() const;

  // The serving generation's health. report_health is the host's own finding (a fault), for that generation.
  health_snapshot health() const;
  // Tools run on their socket's I/O thread (non_blocking ones, within plugins.inline_budget_us): calls so run,
  // calls that overran, and the tools moved to the pool for it (until the plugin reloads).
  struct inline_stats {
    std::uint64_t calls = 0;
    std::uint64_t overruns = 0;
    std::vector<std::string> moved_to_pool;
  };
  inline_stats inline_tools() const;

  // The plugin's own counters (xconn_host_count), kept across reloads.
  plugin_counters& counters() { return counters_; }
  const std::shared_ptr<plugin_metrics>& metrics() const { return metrics_; }
  void report_health(health_state h, std::string last_error_code);
  // Told of every change of the serving generation's health, from any thread. Set before install.
  void on_health_change(std::function<void(health_state)> listener) { health_listener_ = std::move(listener); }
  // A generation's health changed: tells the listener when it is the serving one.
  void health_changed(const plugin_generation& from, health_state h);

  // The reload steps, from the registry's reload thread. install serves a first generation; pause holds new
  // calls; resume serves next (or keeps the current one when next is null) and sends the held calls to it;
  // retire fails every held and later call (the plugin was removed).
  void install(std::shared_ptr<plugin_generation> g);
  void pause();
  // outcome says how the reload went (ok, reason, generations); the pause figures are filled in here.
  void resume(std::shared_ptr<plugin_generation> next, reload_record outcome);
  void retire();
  bool retired() const;
  bool paused() const;  // a reload holds its calls right now
  // A reload that failed before anything paused (the new file never loaded).
  void note_reload(reload_record outcome);
  std::optional<reload_record> last_reload() const;

 private:
  struct held_call {
    std::string what;
    plugin_fn fn;
    strand on;
    std::chrono::milliseconds timeout;
    std::function<void(call_result)> done;
    std::chrono::steady_clock::time_point since;
  };
  // One asynchronous call: fn hands the plugin its xconn_call. what names the call in logs and in the timeout
  // code ("tool" -> tool_timeout).
  void call_async(std::string what, plugin_fn fn, const strand& on, ms timeout, done_fn done);
  // A non_blocking tool's call, here and now, when it may run on this thread (serving, not paused, not moved
  // to the pool); false leaves fn and done untouched for call_async.
  bool call_here(const std::string& tool, plugin_fn& fn, ms timeout, done_fn& done);
  void forget_overruns();  // under mutex_
  // Answers done with a retryable failure, later and on an I/O thread; code defaults to "{what}_failed".
  void fail_later(const std::string& what, std::function<void(call_result)> done, std::string_view why,
                  std::string_view code = {});
  void on_pause_deadline();

  const std::string id_;
  const std::size_t max_held_;
  const std::chrono::seconds max_pause_;
  const std::chrono::microseconds inline_budget_;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;

  plugin_counters counters_;
  std::shared_ptr<plugin_metrics> metrics_ = std::make_shared<plugin_metrics>();
  std::atomic<std::uint64_t> inline_calls_{0}, inline_overruns_{0};
  mutable std::mutex mutex_;  // the gate; current_ changes only under it
  // Under mutex_, cleared when another generation serves: the tools moved to the pool, and the overruns in a row
  // of the others (overrun_streaks_ counts those entries, read without the lock).
  std::set<std::string> moved_to_pool_;
  std::map<std::string, int> overrun_streak_;
  std::atomic<int> overrun_streaks_{0};
  // Read without the lock on every call (manifest, health): the hot path never waits for a reload's bookkeeping.
  std::atomic<std::shared_ptr<plugin_generation>> current_;
  bool paused_ = false;
  bool overdue_ = false;  // paused past max_pause_: calls fail at once
  bool retired_ = false;
  std::deque<held_call> held_;
  std::chrono::steady_clock::time_point paused_at_;
  std::size_t failed_while_paused_ = 0;
  std::shared_ptr<boost::asio::steady_timer> pause_timer_;  // only while paused: none outlives the io_context
  std::optional<reload_record> last_reload_;
  std::function<void(health_state)> health_listener_;
};

}  // namespace xconn
