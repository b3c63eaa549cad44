// One loaded generation of one plugin: its library, its instance, the host table it was given, and every call
// into it. A `connector` serves through one generation at a time; a reload replaces it with the next.
//
// Calls run on the plugin pool, never on an I/O thread. The host enforces every time limit itself; a late
// completion after a timeout is dropped. Each pending call and each task on the pool holds the generation (and
// so the library), so no plugin code is unloaded while it may still run.
#pragma once

#include "core/base/config.hpp"
#include "core/plugin_host/plugin_library.hpp"
#include "core/store/plugin_kv.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace xconn {

class connector;
class plugin_files;

// The outcome of one call: ok with a result object, or an error (code, message, retryable). `thrown`
// marks a plugin exception (its text is for the log only); `timed_out` the host's own limit.
struct call_result {
  bool ok = false;
  std::string json;  // the result (ok) as the plugin wrote it
  std::string code;
  std::string message;
  bool retryable = false;
  bool thrown = false;
  bool timed_out = false;
};

// The host's answer to one plugin emit (plugin.h xconn_emit_result).
struct emit_outcome {
  bool ok = false;
  std::string message_id;
  bool duplicate = false;
  std::string code;
  std::string message;
};

enum class health_state { healthy, degraded, down };
std::string_view to_string(health_state h);

struct health_snapshot {
  health_state health = health_state::healthy;
  std::string last_error_code;
  long long last_seen_at = 0;  // unix ms of the plugin's last sign of life
};

// Where a plugin's calls into the host go, the same for every plugin and generation (the registry owns it).
// Each names the connector the call came from; none may call back into the plugin on the calling thread.
struct plugin_host_hooks {
  // Runs on the plugin's thread and answers done exactly once, on any thread. state: the plugin's own writes to
  // commit with the message (xconn_host_emit_with), empty for a plain emit.
  std::function<void(connector& from, std::string channel_id, std::string message_json, std::vector<kv_op> state,
                     std::function<void(emit_outcome)> done)>
      emit;
  std::function<int(connector& from, std::string channel_id, std::string consumer_key)> consumer_acquire;
  std::function<void(connector& from, std::string channel_id, std::string consumer_key)> consumer_release;
  plugin_files* files = nullptr;
  plugin_kv* kv = nullptr;
  // The plugin's report on one of its channels: "" when taken, else why not.
  std::function<std::string(connector& from, std::string channel_id, std::string report_json)> channel_status;
  std::function<void(const std::string& plugin_id, health_state)> health_changed;
  // The connector's absolute base URL ("" before the server listens).
  std::function<std::string(const connector& of)> base_url;
  // A shared consumer's key for a plugin (consumer_key.hpp); "" when refused. Empty: the call answers -1.
  std::function<std::string(const std::string& plugin_id, std::string_view material)> consumer_key;
  // A plugin call the host refused (kind: "approval_request"), for {base}/events; channel_id as the plugin named it.
  std::function<void(const connector& from, std::string_view channel_id, std::string_view kind, std::string_view code)>
      refused;
};

class plugin_generation : public std::enable_shared_from_this<plugin_generation> {
 public:
  using plugin_fn = std::function<void(const xconn_plugin_api& api, void* instance, xconn_call* call)>;
  using strand = boost::asio::strand<boost::asio::thread_pool::executor_type>;

  // Told of a health change; the connector, which holds its generations (so this file never includes it).
  using health_listener = std::function<void(const plugin_generation& from, health_state h)>;

  // owner is the connector this generation serves (its host calls are reported there while it is current).
  plugin_generation(std::shared_ptr<plugin_library> library, const connector_section& section, std::uint64_t number,
                    std::weak_ptr<connector> owner, health_listener on_health, const plugin_host_hooks& hooks,
                    boost::asio::io_context& io, boost::asio::thread_pool& pool);
  ~plugin_generation();
  plugin_generation(const plugin_generation&) = delete;
  plugin_generation& operator=(const plugin_generation&) = delete;

  // Validates the config section with the plugin and creates the instance; the error names the key.
  bool create(std::string& error);

  // Blocking, for the start-up, reload and shutdown threads: start (or stop) within limit.
  call_result start(std::chrono::milliseconds limit);
  call_result stop(std::chrono::milliseconds limit);

  // One asynchronous call: fn runs on `on` and hands the plugin its xconn_call; done runs on an I/O thread,
  // exactly once, within timeout. Counts as in flight until done has run.
  void call_async(std::string what, plugin_fn fn, const strand& on, std::chrono::milliseconds timeout,
                  std::function<void(call_result)> done) {
    begin_call();
    dispatch_call(std::move(what), std::move(fn), on, timeout, std::move(done));
  }
  // The same in two steps: counted in flight first (drain waits for it from then on), dispatched after.
  void begin_call();
  void dispatch_call(std::string what, plugin_fn fn, const strand& on, std::chrono::milliseconds timeout,
                     std::function<void(call_result)> done);
  // The same call run on the calling thread, now (a non_blocking tool on its socket's I/O thread). After
  // begin_call, like dispatch_call.
  void run_call_here(std::string what, plugin_fn fn, std::chrono::milliseconds timeout,
                     std::function<void(call_result)> done);

  // Where a tool call's progress reports go (xconn_host_call_progress): true when taken. Set before the plugin
  // gets the call.
  using progress_fn = std::function<bool(std::string_view progress_json)>;
  static void attach_progress(xconn_call* call, progress_fn progress);
  // Where an async call's answer runs (an I/O executor: the caller's socket strand, say) instead of any I/O
  // thread: the answer then needs no second hand-off to reach that strand.
  static void answer_on(xconn_call* call, boost::asio::any_io_executor executor);

  // Completes a call as the plugin would have: an Optional hook the plugin's table lacks answers its default.
  static void complete(xconn_call* call, xconn_status status, std::string_view json) {
    on_host_complete(call, status, {json.data(), json.size()});
  }

  // Waits (blocking) until no call is in flight or the deadline passes; returns the calls still in flight.
  std::size_t drain(std::chrono::steady_clock::time_point deadline);

  const plugin_library& library() const { return *library_; }
  std::shared_ptr<plugin_library> library_handle() const { return library_; }
  std::shared_ptr<const plugin_manifest> manifest() const { return {library_, &library_->manifest}; }
  std::uint64_t number() const { return number_; }
  const std::string& config_digest() const { return config_digest_; }
  const std::string& id() const { return library_->manifest.id; }
  plugin_files* files() const { return hooks_.files; }
  // The connector, while it exists (a hung plugin's generation may outlive it).
  std::shared_ptr<connector> owner() const { return owner_.lock(); }

  // Each generation has its own health (a new one starts healthy); the connector shows the serving one's.
  health_snapshot health() const;
  // Returns whether the state changed; the connector is told when this generation serves it.
  bool report_health(health_state h, std::string last_error_code);
  void touch();  // the plugin showed a sign of life
  // A call ran past its limit: degraded (from healthy) until a call is answered in time or the plugin reports.
  void degrade_for_timeout(std::string code);
  void answered_in_time();

 private:
  // The call's state, its deadline armed; the plugin gets the returned handle.
  xconn_call* new_call(std::string what, std::chrono::milliseconds timeout, std::function<void(call_result)> done);
  static void on_host_log(void* ctx, xconn_log_level level, xconn_str text);
  static void on_host_report_health(void* ctx, xconn_health health, xconn_str code);
  static void on_host_complete(xconn_call* call, xconn_status status, xconn_str json);
  static void on_host_emit(void* ctx, xconn_str channel_id, xconn_str message_json, xconn_emit_done done, void* user);
  static int on_host_consumer_acquire(void* ctx, xconn_str channel_id, xconn_str consumer_key);
  static void on_host_consumer_release(void* ctx, xconn_str channel_id, xconn_str consumer_key);
  static xconn_file_upload* on_host_file_begin(void* ctx, xconn_str channel_id, xconn_str filename, xconn_str mime);
  static int on_host_file_write(xconn_file_upload* upload, const void* data, size_t size);
  static void on_host_file_end(xconn_file_upload* upload, int keep, xconn_file_done done, void* user);
  static int64_t on_host_file_read(void* ctx, xconn_str channel_id, xconn_str file_ref, uint64_t offset, void* buffer,
                                   size_t capacity);
  // The plugin's key-value store (host_kv_calls.cpp).
  static int64_t on_host_kv_get(void* ctx, xconn_str key, void* buffer, size_t capacity);
  static size_t on_host_kv_scan(void* ctx, xconn_str prefix, xconn_kv_visit visit, void* user);
  static void on_host_kv_write(void* ctx, const xconn_kv_op* ops, size_t count, xconn_kv_done done, void* user);
  static void on_host_emit_with(void* ctx, xconn_str channel_id, xconn_str message_json, const xconn_kv_op* ops,
                                size_t count, xconn_emit_done done, void* user);
  static int on_host_channel_status(void* ctx, xconn_str channel_id, xconn_str report_json);
  static int on_host_file_write_nowait(xconn_file_upload* upload, const void* data, size_t size,
                                       xconn_file_ready ready, void* user);
  static int on_host_call_progress(xconn_call* call, xconn_str progress_json);
  static int on_host_count(void* ctx, xconn_str name, uint64_t delta);
  static int64_t on_host_base_url(void* ctx, char* out, size_t capacity);
  static int on_host_consumer_key(void* ctx, xconn_str material, char* out, size_t capacity);  // its own file
  static int on_host_file_delete(void* ctx, xconn_str channel_id, xconn_str file_ref);  // its own file
  static int on_host_file_info(void* ctx, xconn_str channel_id, xconn_str file_ref, xconn_file_info_visit visit,
                               void* user);  // its own file
  static void on_host_approval_request(void* ctx, xconn_str channel_id, xconn_str request_json, xconn_emit_done done,
                                       void* user);  // its own file
  void emit(xconn_str channel_id, xconn_str message_json, std::vector<kv_op> state, xconn_emit_done done, void* user);
  void call_finished();
  call_result run_blocking(void (*fn)(void*, xconn_call*), std::chrono::milliseconds limit, const char* what);

  std::shared_ptr<plugin_library> library_;
  std::string config_json_;
  std::string config_digest_;
  std::uint64_t number_;
  std::weak_ptr<connector> owner_;
  health_listener on_health_;
  const plugin_host_hooks& hooks_;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;
  xconn_host_api host_api_{};
  void* instance_ = nullptr;
  std::mutex calls_mutex_;
  std::condition_variable calls_drained_;
  std::size_t in_flight_ = 0;
  mutable std::mutex health_mutex_;
  health_snapshot health_;
  bool degraded_by_timeout_ = false;  // the host's own verdict, lifted by the next call answered in time
};

}  // namespace xconn
