#include "core/plugin_host/plugin_generation.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
#include "core/base/log.hpp"
#include "core/files/plugin_files.hpp"
#include "core/plugin_host/connector.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <cstring>
#include <future>

namespace xconn {
struct call_state {
  std::atomic<bool> done{false};
  std::function<void(call_result)> on_done;
  std::unique_ptr<boost::asio::steady_timer> timer;

  // Called by whichever of answer and timeout wins the `done` flag. Drops the callback afterwards: a hung
  // plugin keeps its xconn_call (and so this state) forever, but must not keep the caller's session alive.
  void finish(call_result r) {
    auto callback = std::move(on_done);
    on_done = nullptr;
    callback(std::move(r));
  }
};
}  // namespace xconn

// The host's side of a call handed to the plugin (declared opaque in plugin.h). Freed when completed.
struct xconn_call {
  std::shared_ptr<xconn::call_state> state;
  std::shared_ptr<xconn::plugin_generation> keepalive;  // async calls: keeps the library loaded until completion
  boost::asio::any_io_executor answer_on;  // where an async answer runs: any I/O thread unless a caller named one
  xconn::plugin_generation::progress_fn progress;  // tool calls: where xconn_host_call_progress goes
  int progress_sent = 0;
};

namespace xconn {
namespace json = boost::json;

namespace {

call_result parse_completion(xconn_status status, std::string_view text) {
  call_result r;
  if (status == XCONN_STATUS_OK) {
    r.ok = true;
    r.json = text.empty() ? "{}" : std::string(text);
    return r;
  }
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  const json::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
  auto str = [&](const char* k) -> std::string {
    auto* x = o ? o->if_contains(k) : nullptr;
    return x && x->is_string() ? std::string(x->as_string()) : std::string();
  };
  auto flag = [&](const char* k) {
    auto* x = o ? o->if_contains(k) : nullptr;
    return x && x->is_bool() && x->as_bool();
  };
  r.code = str("code");
  r.message = str("message");
  r.retryable = flag("retryable");
  r.thrown = flag("thrown");
  if (r.code.empty()) {
    r.code = "invalid_plugin_result";
    r.message = "the plugin failed without a stable code";
  }
  return r;
}

// Auth-group values are secrets: registered for log redaction and masked in the config digest.
void register_secrets(json::value& v, bool mask) {
  if (v.is_object()) {
    for (auto& kv : v.as_object()) register_secrets(kv.value(), mask);
  } else if (v.is_array()) {
    for (auto& e : v.as_array()) register_secrets(e, mask);
  } else if (!v.is_null() && !v.is_bool()) {
    log::add_secret(v.is_string() ? std::string(v.as_string()) : json::serialize(v));
    if (mask) v = "[redacted]";
  }
}

std::string str(xconn_str s) { return std::string(s.data ? s.data : "", s.data ? s.size : 0); }

}  // namespace

std::string_view to_string(health_state h) {
  switch (h) {
    case health_state::healthy: return "healthy";
    case health_state::degraded: return "degraded";
    case health_state::down: return "down";
  }
  return "down";
}

plugin_generation::plugin_generation(std::shared_ptr<plugin_library> library, const connector_section& section,
                                     std::uint64_t number, std::weak_ptr<connector> owner,
                                     health_listener on_health, const plugin_host_hooks& hooks,
                                     boost::asio::io_context& io, boost::asio::thread_pool& pool)
    : library_(std::move(library)),
      config_json_(section.to_json()),
      number_(number),
      owner_(std::move(owner)),
      on_health_(std::move(on_health)),
      hooks_(hooks),
      io_(io),
      pool_(pool) {
  json::value redacted = json::parse(config_json_);
  register_secrets(redacted.as_object()["auth"], true);
  config_digest_ = sha256_hex(json::serialize(redacted));
  host_api_.struct_size = sizeof(xconn_host_api);
  host_api_.api_major = XCONN_PLUGIN_API_MAJOR;
  host_api_.api_minor = XCONN_PLUGIN_API_MINOR;
  host_api_.host_ctx = this;
  host_api_.xconn_host_log = &plugin_generation::on_host_log;
  host_api_.xconn_host_report_health = &plugin_generation::on_host_report_health;
  host_api_.xconn_host_complete = &plugin_generation::on_host_complete;
  host_api_.xconn_host_emit = &plugin_generation::on_host_emit;
  host_api_.xconn_host_consumer_acquire = &plugin_generation::on_host_consumer_acquire;
  host_api_.xconn_host_consumer_release = &plugin_generation::on_host_consumer_release;
  host_api_.xconn_host_file_begin = &plugin_generation::on_host_file_begin;
  host_api_.xconn_host_file_write = &plugin_generation::on_host_file_write;
  host_api_.xconn_host_file_end = &plugin_generation::on_host_file_end;
  host_api_.xconn_host_file_read = &plugin_generation::on_host_file_read;
  host_api_.xconn_host_kv_get = &plugin_generation::on_host_kv_get;
  host_api_.xconn_host_kv_scan = &plugin_generation::on_host_kv_scan;
  host_api_.xconn_host_kv_write = &plugin_generation::on_host_kv_write;
  host_api_.xconn_host_emit_with = &plugin_generation::on_host_emit_with;
  host_api_.xconn_host_channel_status = &plugin_generation::on_host_channel_status;
  host_api_.xconn_host_file_write_nowait = &plugin_generation::on_host_file_write_nowait;
  host_api_.xconn_host_call_progress = &plugin_generation::on_host_call_progress;
  host_api_.xconn_host_count = &plugin_generation::on_host_count;
  host_api_.xconn_host_base_url = &plugin_generation::on_host_base_url;
  host_api_.xconn_host_consumer_key = &plugin_generation::on_host_consumer_key;
  host_api_.xconn_host_file_delete = &plugin_generation::on_host_file_delete;
  host_api_.xconn_host_approval_request = &plugin_generation::on_host_approval_request;
  host_api_.xconn_host_file_info = &plugin_generation::on_host_file_info;
  health_.last_seen_at = unix_ms();
}

plugin_generation::~plugin_generation() {
  if (instance_) library_->api->xconn_plugin_on_destroy(instance_);
}

bool plugin_generation::create(std::string& error) {
  char reason[512] = {};
  const auto* api = library_->api;
  if (api->xconn_plugin_on_validate_config({config_json_.data(), config_json_.size()}, reason, sizeof reason) != 0) {
    error = reason[0] ? std::string(reason) : std::string("rejected by the plugin");
    return false;
  }
  instance_ = api->xconn_plugin_on_create(&host_api_, {config_json_.data(), config_json_.size()});
  if (!instance_) error = "the plugin could not create an instance";
  return instance_ != nullptr;
}

call_result plugin_generation::run_blocking(void (*fn)(void*, xconn_call*), std::chrono::milliseconds limit,
                                            const char* what) {
  auto promise = std::make_shared<std::promise<call_result>>();
  auto future = promise->get_future();
  auto state = std::make_shared<call_state>();
  state->on_done = [promise](call_result r) { promise->set_value(std::move(r)); };
  auto* call = new xconn_call{state, nullptr, {}, {}, 0};  // answered right where it completes
  // The task holds the generation: a plugin that answers and then keeps running (unwinding, returning) must
  // not see its library closed under it by the waiting thread.
  boost::asio::post(pool_, [self = shared_from_this(), fn, call] { fn(self->instance_, call); });
  if (future.wait_for(limit) == std::future_status::ready) return future.get();
  if (!state->done.exchange(true))
    spdlog::error("[plugin {}] {} did not finish within {} ms", id(), what, limit.count());
  call_result r;
  r.code = std::string(what) + "_timeout";
  r.message = std::string(what) + " took too long";
  r.timed_out = true;
  return r;
}

call_result plugin_generation::start(std::chrono::milliseconds limit) {
  return run_blocking(library_->api->xconn_plugin_on_start, limit, "start");
}

call_result plugin_generation::stop(std::chrono::milliseconds limit) {
  return run_blocking(library_->api->xconn_plugin_on_stop, limit, "stop");
}

void plugin_generation::begin_call() {
  std::lock_guard lock(calls_mutex_);
  ++in_flight_;
}

void plugin_generation::dispatch_call(std::string what, plugin_fn fn, const strand& on,
                                      std::chrono::milliseconds timeout, std::function<void(call_result)> done) {
  auto* call = new_call(std::move(what), timeout, std::move(done));
  boost::asio::post(on, [self = shared_from_this(), call, fn = std::move(fn)] {
    fn(*self->library_->api, self->instance_, call);
  });
}

void plugin_generation::run_call_here(std::string what, plugin_fn fn, std::chrono::milliseconds timeout,
                                      std::function<void(call_result)> done) {
  auto* call = new_call(std::move(what), timeout, std::move(done));
  fn(*library_->api, instance_, call);
}

xconn_call* plugin_generation::new_call(std::string what, std::chrono::milliseconds timeout,
                                        std::function<void(call_result)> done) {
  auto state = std::make_shared<call_state>();
  state->timer = std::make_unique<boost::asio::steady_timer>(io_, timeout);
  state->on_done = [self = shared_from_this(), done = std::move(done), what](call_result r) {
    if (r.thrown) spdlog::error("[plugin {}] {} call threw: {}", self->id(), what, r.message);
    if (!r.timed_out) self->answered_in_time();
    done(std::move(r));
    self->call_finished();
  };
  state->timer->async_wait([state, self = shared_from_this(), what](boost::system::error_code ec) {
    if (ec || state->done.exchange(true)) return;
    spdlog::warn("[plugin {}] {} call timed out", self->id(), what);
    self->degrade_for_timeout(what + "_timeout");
    call_result r;
    r.code = what + "_timeout";
    r.message = "the plugin did not answer in time";
    r.retryable = true;
    r.timed_out = true;
    state->finish(std::move(r));
  });
  return new xconn_call{state, shared_from_this(), io_.get_executor(), {}, 0};
}

void plugin_generation::call_finished() {
  std::lock_guard lock(calls_mutex_);
  if (--in_flight_ == 0) calls_drained_.notify_all();
}

std::size_t plugin_generation::drain(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(calls_mutex_);
  calls_drained_.wait_until(lock, deadline, [this] { return in_flight_ == 0; });
  return in_flight_;
}

void plugin_generation::on_host_complete(xconn_call* call, xconn_status status, xconn_str json_text) {
  std::unique_ptr<xconn_call> owned(call);
  if (!owned) return;
  auto result = parse_completion(status, std::string_view(json_text.data ? json_text.data : "", json_text.size));
  auto state = std::move(owned->state);
  if (owned->keepalive) owned->keepalive->touch();
  if (!owned->keepalive) {
    // A blocking call: the waiting thread holds the generation; answer right here.
    if (!state->done.exchange(true)) state->finish(std::move(result));
    return;
  }
  // Async: answer on an I/O thread, and let the generation go there too, never on the plugin's thread
  // (dropping the last reference there would unload the code that is still running).
  auto answer = [state, keepalive = std::move(owned->keepalive), result = std::move(result)]() mutable {
    if (state->done.exchange(true)) return;
    if (state->timer) state->timer->cancel();
    state->finish(std::move(result));
  };
  boost::asio::post(owned->answer_on, std::move(answer));
}

void plugin_generation::on_host_emit(void* ctx, xconn_str channel_id, xconn_str message_json, xconn_emit_done done,
                                     void* user) {
  static_cast<plugin_generation*>(ctx)->emit(channel_id, message_json, {}, done, user);
}

void plugin_generation::emit(xconn_str channel_id, xconn_str message_json, std::vector<kv_op> state,
                             xconn_emit_done done, void* user) {
  // The plugin's callback is plugin code: it runs on the plugin pool, never on the store's writer or an I/O
  // thread, and the generation (so the library) stays loaded until it has run.
  auto answer = [self = shared_from_this(), done, user](emit_outcome o) {
    boost::asio::post(self->pool_, [self, done, user, o = std::move(o)] {
      xconn_emit_result r{sizeof(xconn_emit_result),
                          o.ok ? XCONN_STATUS_OK : XCONN_STATUS_ERROR,
                          {o.message_id.data(), o.message_id.size()},
                          o.duplicate ? 1 : 0,
                          {o.code.data(), o.code.size()},
                          {o.message.data(), o.message.size()}};
      done(user, &r);
    });
  };
  // Any generation's emits count, the retiring one's too: a message it read before its stop is not lost.
  auto from = owner();
  if (!hooks_.emit || !from) return answer({false, "", false, "emit_unavailable", "this host takes no messages"});
  touch();
  hooks_.emit(*from, str(channel_id), str(message_json), std::move(state), std::move(answer));
}

int plugin_generation::on_host_channel_status(void* ctx, xconn_str channel_id, xconn_str report_json) {
  auto* self = static_cast<plugin_generation*>(ctx);
  auto owner = self->owner();
  if (!owner || !self->hooks_.channel_status || !channel_id.data || !report_json.data) return -1;
  self->touch();
  auto why = self->hooks_.channel_status(*owner, str(channel_id), str(report_json));
  if (why.empty()) return 0;
  spdlog::warn("[plugin {}] channel status report refused: {}", self->id(), why);
  return -1;
}

int plugin_generation::on_host_count(void* ctx, xconn_str name, uint64_t delta) {
  auto* self = static_cast<plugin_generation*>(ctx);
  auto owner = self->owner();
  if (!owner || !name.data) return -1;
  return owner->counters().add(str(name), delta) ? 0 : -1;
}

int64_t plugin_generation::on_host_base_url(void* ctx, char* out, size_t capacity) {
  auto* self = static_cast<plugin_generation*>(ctx);
  auto owner = self->owner();
  if (!owner || !self->hooks_.base_url) return -1;
  auto url = self->hooks_.base_url(*owner);
  if (url.empty()) return -1;
  if (out) std::memcpy(out, url.data(), std::min(capacity, url.size()));
  return static_cast<int64_t>(url.size());
}

int plugin_generation::on_host_consumer_acquire(void* ctx, xconn_str channel_id, xconn_str consumer_key) {
  auto* self = static_cast<plugin_generation*>(ctx);
  auto owner = self->owner();
  if (!owner || !self->hooks_.consumer_acquire || !channel_id.data || !consumer_key.data) return -1;
  return self->hooks_.consumer_acquire(*owner, str(channel_id), str(consumer_key));
}

void plugin_generation::on_host_consumer_release(void* ctx, xconn_str channel_id, xconn_str consumer_key) {
  auto* self = static_cast<plugin_generation*>(ctx);
  auto owner = self->owner();
  if (!owner || !self->hooks_.consumer_release || !channel_id.data || !consumer_key.data) return;
  self->hooks_.consumer_release(*owner, str(channel_id), str(consumer_key));
}

xconn_file_upload* plugin_generation::on_host_file_begin(void* ctx, xconn_str channel_id, xconn_str filename,
                                                         xconn_str mime) {
  auto* self = static_cast<plugin_generation*>(ctx);
  if (!self->hooks_.files || !channel_id.data) return nullptr;
  auto view = [](xconn_str s) { return std::string_view(s.data ? s.data : "", s.data ? s.size : 0); };
  auto* upload = self->hooks_.files->begin(self->id(), view(channel_id), view(filename), view(mime));
  if (upload) upload->from = self->shared_from_this();
  return upload;
}

int plugin_generation::on_host_file_write(xconn_file_upload* upload, const void* data, size_t size) {
  if (!upload || (!data && size)) return -1;
  return upload->from->files()->write(*upload, {static_cast<const char*>(data), size}) ? 0 : -1;
}

int plugin_generation::on_host_file_write_nowait(xconn_file_upload* upload, const void* data, size_t size,
                                                  xconn_file_ready ready, void* user) {
  if (!upload || (!data && size) || !ready) return -1;
  auto self = upload->from;
  // ready runs on the plugin pool, as every callback into the plugin, with the library kept loaded.
  return self->files()->write_nowait(*upload, {static_cast<const char*>(data), size}, [self, ready, user] {
    boost::asio::post(self->pool_, [self, ready, user] { ready(user); });
  });
}

void plugin_generation::attach_progress(xconn_call* call, progress_fn progress) { call->progress = std::move(progress); }

void plugin_generation::answer_on(xconn_call* call, boost::asio::any_io_executor executor) {
  call->answer_on = std::move(executor);
}

int plugin_generation::on_host_call_progress(xconn_call* call, xconn_str progress_json) {
  constexpr int max_per_call = 100;
  if (!call || !call->progress || !call->state || call->state->done || ++call->progress_sent > max_per_call) return -1;
  return call->progress(std::string_view(progress_json.data ? progress_json.data : "",
                                         progress_json.data ? progress_json.size : 0))
             ? 0
             : -1;
}

void plugin_generation::on_host_file_end(xconn_file_upload* upload, int keep, xconn_file_done done, void* user) {
  if (!upload) return;
  auto self = upload->from;
  // As with emit: the plugin's callback runs on the plugin pool, with the library kept loaded.
  self->files()->end(upload, keep != 0, [self, done, user](boost::system::result<stored_file, std::string> stored) {
    boost::asio::post(self->pool_, [self, done, user, stored = std::move(stored)] {
      std::string item = stored ? boost::json::serialize(stored->item()) : std::string();
      std::string code = stored ? std::string() : stored.error();
      std::string message = code == "payload_too_large" ? "over files.max_bytes"
                            : code == "discarded"        ? "discarded by the plugin"
                            : code.empty()               ? ""
                                                         : "the file could not be stored";
      xconn_file_result r{sizeof(xconn_file_result),
                          stored ? XCONN_STATUS_OK : XCONN_STATUS_ERROR,
                          {item.data(), item.size()},
                          {code.data(), code.size()},
                          {message.data(), message.size()}};
      if (done) done(user, &r);
    });
  });
}

int64_t plugin_generation::on_host_file_read(void* ctx, xconn_str channel_id, xconn_str file_ref, uint64_t offset,
                                             void* buffer, size_t capacity) {
  auto* self = static_cast<plugin_generation*>(ctx);
  if (!self->hooks_.files || !channel_id.data || !file_ref.data || (!buffer && capacity)) return -1;
  return self->hooks_.files->read(self->id(), {channel_id.data, channel_id.size}, {file_ref.data, file_ref.size},
                                  offset, static_cast<char*>(buffer), capacity);
}

void plugin_generation::on_host_log(void* ctx, xconn_log_level level, xconn_str text) {
  auto* self = static_cast<plugin_generation*>(ctx);
  std::string_view line(text.data ? text.data : "", text.size);
  if (line.size() > 4096) line = line.substr(0, 4096);
  static constexpr spdlog::level::level_enum levels[] = {spdlog::level::debug, spdlog::level::info,
                                                         spdlog::level::warn, spdlog::level::err};
  auto lvl = level >= XCONN_LOG_DEBUG && level <= XCONN_LOG_ERROR ? levels[level] : spdlog::level::info;
  spdlog::log(lvl, "[plugin {} gen {}] {}", self->id(), self->number_, line);
}

void plugin_generation::on_host_report_health(void* ctx, xconn_health health, xconn_str code) {
  auto* self = static_cast<plugin_generation*>(ctx);
  health_state h = health == XCONN_HEALTH_HEALTHY    ? health_state::healthy
                   : health == XCONN_HEALTH_DEGRADED ? health_state::degraded
                                                     : health_state::down;
  {
    std::lock_guard lock(self->health_mutex_);
    self->degraded_by_timeout_ = false;  // the plugin's own word replaces the host's verdict
  }
  self->report_health(h, str(code));
}

void plugin_generation::degrade_for_timeout(std::string code) {
  {
    std::lock_guard lock(health_mutex_);
    if (health_.health == health_state::down) return;  // the plugin's worse word stands
    if (health_.health == health_state::healthy) degraded_by_timeout_ = true;
  }
  report_health(health_state::degraded, std::move(code));
}

void plugin_generation::answered_in_time() {
  {
    std::lock_guard lock(health_mutex_);
    if (!degraded_by_timeout_) return;
    degraded_by_timeout_ = false;
  }
  report_health(health_state::healthy, "");
}

bool plugin_generation::report_health(health_state h, std::string last_error_code) {
  bool changed = false;
  {
    std::lock_guard lock(health_mutex_);
    changed = h != health_.health;
    if (changed)
      spdlog::info("[plugin {} gen {}] health {} -> {}{}", id(), number_, to_string(health_.health), to_string(h),
                   last_error_code.empty() ? "" : " (" + last_error_code + ")");
    health_.health = h;
    if (!last_error_code.empty()) health_.last_error_code = std::move(last_error_code);
    health_.last_seen_at = unix_ms();
  }
  // Outside the lock: the listener reads health() back while it builds descriptors.
  if (changed && on_health_) on_health_(*this, h);
  return changed;
}

void plugin_generation::touch() {
  std::lock_guard lock(health_mutex_);
  health_.last_seen_at = unix_ms();
}

health_snapshot plugin_generation::health() const {
  std::lock_guard lock(health_mutex_);
  return health_;
}

}  // namespace xconn
