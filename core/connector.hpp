// One loaded generation of one plugin: its instance, its host table, its health, and every call into it.
//
// Calls run on the plugin pool, never on an I/O thread. The host enforces every time limit itself; a
// late completion after a timeout is dropped. Each pending call holds the connector (and so the library)
// alive, so no plugin code can be unloaded while it may still run.
#pragma once

#include "core/config.hpp"
#include "core/plugin_files.hpp"
#include "core/plugin_library.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace xconn {

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

class connector : public std::enable_shared_from_this<connector> {
 public:
  connector(std::shared_ptr<plugin_library> library, const connector_section& section, std::uint64_t generation,
            boost::asio::io_context& io, boost::asio::thread_pool& pool);
  ~connector();
  connector(const connector&) = delete;
  connector& operator=(const connector&) = delete;

  // Validates the config section with the plugin and creates the instance; the error names the key.
  bool create(std::string& error);

  // Blocking, for the start-up and shutdown thread: start (or stop) within limit.
  call_result start(std::chrono::milliseconds limit);
  call_result stop(std::chrono::milliseconds limit);

  // One asynchronous call into the plugin: fn runs on `on` (a channel's strand of the plugin pool, so calls on
  // one channel never overlap) and hands the plugin its xconn_call; done runs on an I/O thread, exactly once,
  // within timeout. what names the call in logs and in the timeout code ("tool" -> tool_timeout).
  using plugin_fn = std::function<void(const xconn_plugin_api& api, void* instance, xconn_call* call)>;
  using strand = boost::asio::strand<boost::asio::thread_pool::executor_type>;
  void call_async(std::string what, plugin_fn fn, const strand& on, std::chrono::milliseconds timeout,
                  std::function<void(call_result)> done);
  strand make_strand() { return boost::asio::make_strand(pool_); }

  void invoke_tool(std::string channel_id, std::string tool_id, std::string arguments_json,
                   std::string context_json, const strand& on, std::chrono::milliseconds timeout,
                   std::function<void(call_result)> done);

  // Health changes, for descriptor pushes. Set before start; runs on whichever thread reported the change.
  void on_health_change(std::function<void(health_state)> listener) { health_listener_ = std::move(listener); }

  // Where the plugin's emits go (the inbound queue). Set before start. The handler runs on the plugin's
  // thread and answers done exactly once, on any thread; the plugin's callback then runs on the plugin pool.
  using emit_handler = std::function<void(connector& from, std::string channel_id, std::string message_json,
                                          std::function<void(emit_outcome)> done)>;
  void on_emit(emit_handler handler) { emit_handler_ = std::move(handler); }

  // Where the plugin's shared-consumer references go (plugin.h xconn_host_consumer_acquire / _release). Set
  // before start; they run on the plugin's thread and must not call back into it.
  struct consumer_handlers {
    std::function<int(connector& from, std::string channel_id, std::string consumer_key)> acquire;
    std::function<void(connector& from, std::string channel_id, std::string consumer_key)> release;
  };
  void on_consumers(consumer_handlers handlers) { consumer_handlers_ = std::move(handlers); }

  // The file store the plugin writes attachments to and reads outbound files from. Set before start.
  void on_files(plugin_files* files) { files_ = files; }

  const plugin_manifest& manifest() const { return library_->manifest; }
  const std::string& id() const { return library_->manifest.id; }
  std::uint64_t generation() const { return generation_; }
  const std::string& config_digest() const { return config_digest_; }
  health_snapshot health() const;
  void report_health(health_state h, std::string last_error_code);  // also used by the host on faults

 private:
  struct pending;  // one call in flight
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
  void touch();  // the plugin showed a sign of life
  call_result run_blocking(void (*fn)(void*, xconn_call*), std::chrono::milliseconds limit, const char* what);

  std::shared_ptr<plugin_library> library_;
  std::string config_json_;
  std::string config_digest_;
  std::uint64_t generation_;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;
  xconn_host_api host_api_{};
  void* instance_ = nullptr;
  mutable std::mutex health_mutex_;
  health_snapshot health_;
  std::function<void(health_state)> health_listener_;
  emit_handler emit_handler_;
  consumer_handlers consumer_handlers_;
  plugin_files* files_ = nullptr;
};

}  // namespace xconn
