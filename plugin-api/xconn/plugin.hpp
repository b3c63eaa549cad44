// Header-only C++ SDK over the C ABI in plugin.h: a plugin author writes one class and one macro.
//
//   class my_plugin : public xconn::sdk::plugin {
//    public:
//     static std::string_view manifest();                          // the JSON declaration
//     static std::string validate_config(std::string_view json);   // "" when valid, else "group.key: why"
//     my_plugin(xconn::sdk::host host, std::string_view config_json);
//     void invoke_tool(...) override;                              // and start / stop as needed
//   };
//   XCONN_PLUGIN(my_plugin)
//
// No exception leaves the plugin: every trampoline catches and completes the call as an error with
// "thrown": true (the host logs the text and answers a generic failure on the wire).
#ifndef XCONN_PLUGIN_HPP
#define XCONN_PLUGIN_HPP

#include <xconn/plugin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Build facts; xconn_add_plugin() in CMake stamps the real ones.
#ifndef XCONN_PLUGIN_BUILD_VERSION
#define XCONN_PLUGIN_BUILD_VERSION "0.0.0"
#endif
#ifndef XCONN_PLUGIN_BUILD_GIT_TAG
#define XCONN_PLUGIN_BUILD_GIT_TAG ""
#endif
#ifndef XCONN_PLUGIN_BUILD_GIT_REV
#define XCONN_PLUGIN_BUILD_GIT_REV "unknown"
#endif
#ifndef XCONN_PLUGIN_BUILD_TIME
#define XCONN_PLUGIN_BUILD_TIME "0000000000"
#endif

namespace xconn::sdk {

inline xconn_str to_c(std::string_view s) { return xconn_str{s.data(), s.size()}; }
inline std::string_view from_c(xconn_str s) { return s.data ? std::string_view(s.data, s.size) : std::string_view(); }

// A JSON string literal for s (quotes included); control characters are escaped.
inline std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

// A business failure with a stable code; message is short and holds no secret.
struct error {
  std::string code;
  std::string message;
  bool retryable = false;

  std::string to_json(bool thrown = false) const {
    std::string out = "{\"code\":" + json_quote(code) + ",\"message\":" + json_quote(message) +
                      ",\"retryable\":" + (retryable ? "true" : "false");
    if (thrown) out += ",\"thrown\":true";
    return out + "}";
  }
};

// The host's answer to one emit.
struct emit_result {
  bool ok = false;
  std::string message_id;  // the host's id for it (ok)
  bool duplicate = false;  // its msg_id was already taken: nothing new was stored
  error failure;           // code and message (not ok)
};

// The host's answer to storing one file.
struct file_result {
  bool ok = false;
  std::string file_json;  // the IM file item (ok): {"file_ref","type","filename","mime_type","byte_size","expires_at"}
  error failure;          // code and message (not ok)
};

// The answer to one key-value write.
struct kv_result {
  bool ok = false;
  error failure;  // code (invalid_argument, kv_quota_exceeded, store_failed) and message (not ok)
};

// Puts and deletes for the plugin's key-value store, committed together. Owns its bytes.
class kv_batch {
 public:
  kv_batch& put(std::string_view key, std::string_view value) {
    ops_.push_back({false, std::string(key), std::string(value)});
    return *this;
  }
  kv_batch& erase(std::string_view key) {
    ops_.push_back({true, std::string(key), {}});
    return *this;
  }
  bool empty() const { return ops_.empty(); }
  // The C view, valid while the batch is.
  std::vector<xconn_kv_op> c_ops() const {
    std::vector<xconn_kv_op> out;
    out.reserve(ops_.size());
    for (const auto& op : ops_) out.push_back({sizeof(xconn_kv_op), op.erase ? 1 : 0, to_c(op.key), to_c(op.value)});
    return out;
  }

 private:
  struct op {
    bool erase;
    std::string key, value;
  };
  std::vector<op> ops_;
};

// Whether a host table reaches a function: an older host's table ends before the newer ones.
#define XCONN_HOST_HAS(api, fn) \
  ((api)->struct_size >= offsetof(xconn_host_api, fn) + sizeof((api)->fn) && (api)->fn != nullptr)

// The host's services, as handed to the plugin. Cheap to copy; valid for the instance's lifetime.
class host {
 public:
  explicit host(const xconn_host_api* api) : api_(api) {}

  void log(xconn_log_level level, std::string_view text) const {
    api_->xconn_host_log(api_->host_ctx, level, to_c(text));
  }
  void info(std::string_view text) const { log(XCONN_LOG_INFO, text); }
  void warn(std::string_view text) const { log(XCONN_LOG_WARN, text); }
  void report_health(xconn_health health, std::string_view last_error_code = {}) const {
    api_->xconn_host_report_health(api_->host_ctx, health, to_c(last_error_code));
  }
  const xconn_host_api* c_api() const { return api_; }

  // One inbound message to one channel (see plugin.h). done runs exactly once, on any thread, possibly
  // before emit returns; the message is durable when it reports ok.
  void emit(std::string_view connector_channel_id, std::string_view message_json,
            std::function<void(emit_result)> done) const {
    auto* user = new std::function<void(emit_result)>(std::move(done));
    api_->xconn_host_emit(api_->host_ctx, to_c(connector_channel_id), to_c(message_json), &host::emit_done, user);
  }

  // Shared consumers (see plugin.h): acquire returns how many channels hold the consumer now (1: start it).
  int acquire_consumer(std::string_view connector_channel_id, std::string_view consumer_key) const {
    return api_->xconn_host_consumer_acquire(api_->host_ctx, to_c(connector_channel_id), to_c(consumer_key));
  }
  void release_consumer(std::string_view connector_channel_id, std::string_view consumer_key) const {
    api_->xconn_host_consumer_release(api_->host_ctx, to_c(connector_channel_id), to_c(consumer_key));
  }

  // Whether the host has the file store (ABI 1.2).
  bool has_files() const { return XCONN_HOST_HAS(api_, xconn_host_file_read); }
  // Whether the host keeps the plugin's key-value store (ABI 1.3).
  bool has_kv() const { return XCONN_HOST_HAS(api_, xconn_host_emit_with); }

  // Stores bytes as a file of the channel, piece by piece (see plugin.h); done runs once with the file item. Emit
  // it afterwards as {"files":[{"file_ref": ...}]}. For a large attachment, call the C API's begin/write/end
  // directly and feed it as the target delivers it.
  void put_file(std::string_view connector_channel_id, std::string_view filename, std::string_view mime_type,
                std::string_view bytes, std::function<void(file_result)> done) const {
    if (!has_files()) return done({false, {}, {"files_unsupported", "this host has no file store", false}});
    auto* upload = api_->xconn_host_file_begin(api_->host_ctx, to_c(connector_channel_id), to_c(filename),
                                               to_c(mime_type));
    if (!upload) return done({false, {}, {"channel_not_found", "no such channel of this plugin", false}});
    constexpr std::size_t piece = 64 * 1024;
    for (std::size_t at = 0; at < bytes.size(); at += piece)
      if (api_->xconn_host_file_write(upload, bytes.data() + at, std::min(piece, bytes.size() - at)) != 0) break;
    auto* user = new std::function<void(file_result)>(std::move(done));
    api_->xconn_host_file_end(upload, 1, &host::file_done, user);
  }

  // The plugin's own durable key-value store (see plugin.h). get: nullopt when absent (or no store on this host).
  std::optional<std::string> kv_get(std::string_view key) const {
    if (!has_kv()) return std::nullopt;
    std::string value(256, '\0');
    for (;;) {
      auto size = api_->xconn_host_kv_get(api_->host_ctx, to_c(key), value.data(), value.size());
      if (size < 0) return std::nullopt;
      bool fits = static_cast<std::size_t>(size) <= value.size();
      value.resize(static_cast<std::size_t>(size));
      if (fits) return value;
    }
  }
  // Visits keys starting with prefix in byte order; visit returns false to stop.
  void kv_scan(std::string_view prefix, std::function<bool(std::string_view key, std::string_view value)> visit) const {
    if (!has_kv()) return;
    api_->xconn_host_kv_scan(api_->host_ctx, to_c(prefix), &host::kv_visit, &visit);
  }
  // Puts and deletes committed together; done (optional) runs once, on any thread, after the commit.
  void kv_write(const kv_batch& batch, std::function<void(kv_result)> done = {}) const {
    if (!has_kv()) return done ? done({false, {"kv_unavailable", "this host keeps no plugin state", false}}) : void();
    auto ops = batch.c_ops();
    auto* user = new std::function<void(kv_result)>(std::move(done));
    api_->xconn_host_kv_write(api_->host_ctx, ops.data(), ops.size(), &host::kv_done, user);
  }
  // emit, with batch committed in the same transaction as the message (a target cursor).
  void emit_with(std::string_view connector_channel_id, std::string_view message_json, const kv_batch& batch,
                 std::function<void(emit_result)> done) const {
    if (!has_kv()) return done({false, {}, false, {"kv_unavailable", "this host keeps no plugin state", false}});
    auto ops = batch.c_ops();
    auto* user = new std::function<void(emit_result)>(std::move(done));
    api_->xconn_host_emit_with(api_->host_ctx, to_c(connector_channel_id), to_c(message_json), ops.data(), ops.size(),
                               &host::emit_done, user);
  }

  // The state of one signed-in channel's binding (see plugin.h): status "revoked", "expired", "degraded", ...;
  // tools_json, when not empty, a JSON array as in a binding. Returns whether the host took it.
  bool set_channel_status(std::string_view connector_channel_id, std::string_view status,
                          std::string_view tools_json = {}) const {
    if (!XCONN_HOST_HAS(api_, xconn_host_channel_status)) return false;
    std::string report = "{\"status\":" + json_quote(status);
    if (!tools_json.empty()) report.append(",\"tools\":").append(tools_json);
    report += "}";
    return api_->xconn_host_channel_status(api_->host_ctx, to_c(connector_channel_id), to_c(report)) == 0;
  }

  // Reads up to size bytes of a file of the channel from offset; -1 when there is no such file there.
  std::int64_t read_file(std::string_view connector_channel_id, std::string_view file_ref, std::uint64_t offset,
                         char* out, std::size_t size) const {
    if (!has_files()) return -1;
    return api_->xconn_host_file_read(api_->host_ctx, to_c(connector_channel_id), to_c(file_ref), offset, out, size);
  }

 private:
  static int kv_visit(void* user, xconn_str key, xconn_str value) {
    auto& visit = *static_cast<std::function<bool(std::string_view, std::string_view)>*>(user);
    try {
      return visit(from_c(key), from_c(value)) ? 1 : 0;
    } catch (...) {
      return 0;
    }
  }
  static void kv_done(void* user, xconn_status status, xconn_str code, xconn_str message) {
    auto* fn = static_cast<std::function<void(kv_result)>*>(user);
    kv_result r;
    r.ok = status == XCONN_STATUS_OK;
    if (!r.ok) r.failure = {std::string(from_c(code)), std::string(from_c(message)), false};
    try {
      if (*fn) (*fn)(std::move(r));
    } catch (...) {
    }
    delete fn;
  }
  static void file_done(void* user, const xconn_file_result* c) {
    auto* fn = static_cast<std::function<void(file_result)>*>(user);
    file_result r;
    r.ok = c->status == XCONN_STATUS_OK;
    r.file_json = std::string(from_c(c->file_json));
    if (!r.ok) r.failure = {std::string(from_c(c->code)), std::string(from_c(c->message)), false};
    try {
      if (*fn) (*fn)(std::move(r));
    } catch (...) {
    }
    delete fn;
  }

  static void emit_done(void* user, const xconn_emit_result* c) {
    auto* fn = static_cast<std::function<void(emit_result)>*>(user);
    emit_result r;
    r.ok = c->status == XCONN_STATUS_OK;
    r.message_id = std::string(from_c(c->message_id));
    r.duplicate = c->duplicate != 0;
    if (!r.ok) r.failure = {std::string(from_c(c->code)), std::string(from_c(c->message)), false};
    try {
      if (*fn) (*fn)(std::move(r));
    } catch (...) {
    }
    delete fn;
  }
  const xconn_host_api* api_;
};

// The answer to a plugin HTTP route: {"status","content_type","body"}, and "headers" when headers_json (a JSON
// object's text) is not empty.
inline std::string http_answer(int status, std::string_view body, std::string_view content_type = "application/json",
                               std::string_view headers_json = {}) {
  std::string out = "{\"status\":" + std::to_string(status) + ",\"content_type\":" + json_quote(content_type) +
                    ",\"body\":" + json_quote(body);
  if (!headers_json.empty()) out.append(",\"headers\":").append(headers_json);
  return out + "}";
}

// Completes one host call exactly once. Move-only; may travel to another thread and complete later.
// Dropping it uncompleted answers the call as failed, so a forgotten path never hangs the host.
class completion {
 public:
  // rescue: set only by the SDK's trampolines; see the destructor.
  completion(const xconn_host_api* api, xconn_call* call, xconn_call** rescue = nullptr)
      : api_(api), call_(call), rescue_(rescue), uncaught_(std::uncaught_exceptions()) {}
  completion(completion&& other) noexcept
      : api_(other.api_), call_(other.call_.exchange(nullptr)), uncaught_(std::uncaught_exceptions()) {}
  completion& operator=(completion&&) = delete;
  completion(const completion&) = delete;
  ~completion() {
    xconn_call* call = call_.exchange(nullptr);
    if (!call) return;
    // The handler threw while still holding the call: hand it back so the trampoline answers it once, with
    // the exception's text, instead of answering it here and again there.
    if (rescue_ && std::uncaught_exceptions() > uncaught_) {
      *rescue_ = call;
      return;
    }
    api_->xconn_host_complete(call, XCONN_STATUS_ERROR,
                              to_c(error{"plugin_dropped_call", "the plugin dropped the call without answering", true}.to_json()));
  }

  void ok(std::string_view result_json = "{}") { finish(XCONN_STATUS_OK, result_json); }
  void fail(const error& e, bool thrown = false) { finish(XCONN_STATUS_ERROR, e.to_json(thrown)); }

 private:
  void finish(xconn_status status, std::string_view json) {
    if (xconn_call* call = call_.exchange(nullptr)) api_->xconn_host_complete(call, status, to_c(json));
  }
  const xconn_host_api* api_;
  std::atomic<xconn_call*> call_;
  xconn_call** rescue_ = nullptr;
  int uncaught_;
};

class plugin {
 public:
  virtual ~plugin() = default;
  virtual void start(completion done) { done.ok(); }
  virtual void stop(completion done) { done.ok(); }
  virtual void invoke_tool(std::string_view connector_channel_id, std::string_view tool_id,
                           std::string_view arguments_json, std::string_view context_json, completion done) {
    (void)connector_channel_id;
    (void)arguments_json;
    (void)context_json;
    done.fail({"tool_not_found", "no tool " + std::string(tool_id), false});
  }
  // Auth flows: see plugin.h for the answer each completes with.
  virtual void auth_start(std::string_view connector_channel_id, std::string_view flow_id,
                          std::string_view auth_session_id, std::string_view input_json, completion done) {
    (void)connector_channel_id;
    (void)auth_session_id;
    (void)input_json;
    done.fail({"auth_flow_not_found", "no auth flow " + std::string(flow_id), false});
  }
  virtual void auth_status(std::string_view connector_channel_id, std::string_view flow_id,
                           std::string_view auth_session_id, bool refresh, completion done) {
    (void)connector_channel_id;
    (void)flow_id;
    (void)auth_session_id;
    (void)refresh;
    done.fail({"auth_session_not_found", "no such auth session", false});
  }
  virtual void auth_cancel(std::string_view connector_channel_id, std::string_view flow_id,
                           std::string_view auth_session_id, completion done) {
    (void)connector_channel_id;
    (void)flow_id;
    (void)auth_session_id;
    done.ok();
  }
  virtual void auth_logout(std::string_view connector_channel_id, completion done) {
    (void)connector_channel_id;
    done.ok();
  }
  // Messaging: see plugin.h for the reply and the result send completes with.
  virtual void send(std::string_view connector_channel_id, std::string_view reply_json, completion done) {
    (void)connector_channel_id;
    (void)reply_json;
    done.ok(R"({"ok":false,"error":"send_not_supported","retryable":false})");
  }
  virtual void update(std::string_view connector_channel_id, std::string_view message_id,
                      std::string_view text_so_far, completion done) {
    (void)connector_channel_id;
    (void)message_id;
    (void)text_so_far;
    done.ok();
  }
  virtual void activity(std::string_view connector_channel_id, std::string_view status, std::string_view tool_name,
                        completion done) {
    (void)connector_channel_id;
    (void)status;
    (void)tool_name;
    done.ok();
  }
  // A declared HTTP route, whole (ABI 1.3): its headers ({"name":"value"}, lowercase), the {param} segment's value
  // and the raw body. By default it goes to http() below; answer with http_answer(...), which may carry headers.
  struct http_request_view {
    std::string_view method, path, path_param, query, headers_json, body;
  };
  virtual void http_request(const http_request_view& request, completion done) {
    http(request.method, request.path, request.query, request.body, std::move(done));
  }
  // A declared HTTP route; answer with http_answer(...).
  virtual void http(std::string_view method, std::string_view path, std::string_view query, std::string_view body,
                    completion done) {
    (void)method;
    (void)path;
    (void)query;
    (void)body;
    done.ok(http_answer(404, R"({"error":{"code":"not_found","message":"no such route"}})"));
  }
  // The last channel holding the consumer let go: stop it.
  virtual void consumer_stop(std::string_view consumer_key, completion done) {
    (void)consumer_key;
    done.ok();
  }
  // A signed-in channel after start, with its binding and credentials: verify them with the target and answer a
  // report, e.g. channel_report("connected"). Called only for a plugin class that declares
  //   static constexpr bool verifies_restored_channels = true;
  // (without it, its channels show connected at once, as before ABI 1.3).
  virtual void channel_restore(std::string_view connector_channel_id, std::string_view binding_json,
                               std::string_view credentials_json, completion done) {
    (void)connector_channel_id;
    (void)binding_json;
    (void)credentials_json;
    done.ok(R"({"status":"connected"})");
  }
};

// The report of a channel's state (plugin.h xconn_host_channel_status, on_channel_restore).
inline std::string channel_report(std::string_view status) { return "{\"status\":" + json_quote(status) + "}"; }

namespace detail {

// One instance as the host sees it: the C++ object plus the host table it was made with.
struct instance {
  const xconn_host_api* host;
  plugin* object;
};

// Runs fn(rescue); fn passes completion(host, call, rescue) to the plugin as a prvalue, so the plugin's own
// parameter carries the rescue slot. A throw answers the call as an error only when that parameter still held
// it; a call the plugin moved elsewhere is answered by its new owner. Never twice.
template <class Fn>
void guarded(const xconn_host_api* host, Fn&& fn) {
  xconn_call* rescued = nullptr;
  try {
    fn(&rescued);
  } catch (const std::exception& e) {
    if (rescued) completion(host, rescued).fail({"plugin_exception", e.what(), true}, true);
  } catch (...) {
    if (rescued) completion(host, rescued).fail({"plugin_exception", "unknown exception", true}, true);
  }
}

inline std::string_view from_c_arg(xconn_str s) { return from_c(s); }
inline bool from_c_arg(int flag) { return flag != 0; }

// Every call hook of the table: the C arguments as C++ ones, then the plugin's method with the call's completion,
// guarded. Method's C signature is taken from the table's slot it is assigned to.
template <auto Method, class... CArgs>
void forward(void* p, xconn_call* call, CArgs... args) {
  auto* self = static_cast<instance*>(p);
  guarded(self->host, [&](xconn_call** rescue) {
    (self->object->*Method)(from_c_arg(args)..., completion(self->host, call, rescue));
  });
}

template <class Plugin>
constexpr bool verifies_restored_channels() {
  if constexpr (requires { Plugin::verifies_restored_channels; })
    return Plugin::verifies_restored_channels;
  else
    return false;
}

template <class Plugin>
const xconn_plugin_api* table_for(uint32_t host_major) {
  if (host_major != XCONN_PLUGIN_API_MAJOR) return nullptr;
  static const std::string manifest(Plugin::manifest());
  static const std::string build = std::string("{\"version\":") + json_quote(XCONN_PLUGIN_BUILD_VERSION) +
                                   ",\"git_tag\":" + json_quote(XCONN_PLUGIN_BUILD_GIT_TAG) +
                                   ",\"git_rev\":" + json_quote(XCONN_PLUGIN_BUILD_GIT_REV) +
                                   ",\"build_time\":" + json_quote(XCONN_PLUGIN_BUILD_TIME) + "}";
  static const xconn_plugin_api table = {
      sizeof(xconn_plugin_api),
      XCONN_PLUGIN_API_MAJOR,
      XCONN_PLUGIN_API_MINOR,
      to_c(manifest),
      to_c(build),
      // on_validate_config
      [](xconn_str config, char* error, size_t capacity) -> int {
        std::string reason;
        try {
          reason = Plugin::validate_config(from_c(config));
        } catch (const std::exception& e) {
          reason = std::string("config: ") + e.what();
        } catch (...) {
          reason = "config: unreadable";
        }
        if (reason.empty()) return 0;
        if (capacity > 0) {
          size_t n = reason.size() < capacity - 1 ? reason.size() : capacity - 1;
          std::memcpy(error, reason.data(), n);
          error[n] = '\0';
        }
        return 1;
      },
      // on_create
      [](const xconn_host_api* host_api, xconn_str config) -> void* {
        try {
          return new instance{host_api, new Plugin(host(host_api), from_c(config))};
        } catch (const std::exception& e) {
          host(host_api).log(XCONN_LOG_ERROR, std::string("create failed: ") + e.what());
        } catch (...) {
          host(host_api).log(XCONN_LOG_ERROR, "create failed");
        }
        return nullptr;
      },
      // on_destroy
      [](void* p) {
        auto* self = static_cast<instance*>(p);
        try {
          delete self->object;
        } catch (...) {
        }
        delete self;
      },
      &forward<&plugin::start>,
      &forward<&plugin::stop>,
      &forward<&plugin::invoke_tool>,
      &forward<&plugin::auth_start>,
      &forward<&plugin::auth_status>,
      &forward<&plugin::auth_cancel>,
      &forward<&plugin::auth_logout>,
      &forward<&plugin::send>,
      &forward<&plugin::update>,
      &forward<&plugin::activity>,
      &forward<&plugin::http>,
      &forward<&plugin::consumer_stop>,
      verifies_restored_channels<Plugin>() ? &forward<&plugin::channel_restore, xconn_str, xconn_str, xconn_str>
                                           : nullptr,
      // on_http_request
      [](void* p, xconn_call* call, const xconn_http_request* r) {
        auto* self = static_cast<instance*>(p);
        guarded(self->host, [&](xconn_call** rescue) {
          plugin::http_request_view view{from_c(r->method), from_c(r->path),         from_c(r->path_param),
                                         from_c(r->query),  from_c(r->headers_json), from_c(r->body)};
          self->object->http_request(view, completion(self->host, call, rescue));
        });
      },
  };
  return &table;
}

}  // namespace detail
}  // namespace xconn::sdk

// Exports the one entry symbol for Plugin. Use once per plugin library.
#define XCONN_PLUGIN(Plugin)                                                                   \
  extern "C" __attribute__((visibility("default"))) const xconn_plugin_api* xconn_plugin_entry( \
      uint32_t host_api_major) {                                                               \
    return ::xconn::sdk::detail::table_for<Plugin>(host_api_major);                           \
  }

#endif  // XCONN_PLUGIN_HPP
