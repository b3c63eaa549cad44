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
//
// Only the hooks the class overrides fill their C slots; one it leaves alone stays NULL, so the host's own rule for
// a missing hook applies (plugin.h: a final fails with not_supported, a route answers 501, a manifest declaring a
// feature without its hook is refused at load). The auth hooks go together: overriding any fills all four.
#ifndef XCONN_PLUGIN_HPP
#define XCONN_PLUGIN_HPP

#include <xconn/host_services.hpp>
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
#include <type_traits>
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
  // A running tool call's progress (tool.progress.push): {"message", "progress" 0..1}. False when the host refused
  // it, or is older than ABI 1.3, or the call is already answered.
  bool progress(std::string_view progress_json) const {
    xconn_call* call = call_.load();
    if (!call || !XCONN_HOST_HAS(api_, xconn_host_call_progress)) return false;
    return api_->xconn_host_call_progress(call, to_c(progress_json)) == 0;
  }

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
  // When stop returns, every call in flight is answered or dropped: an unanswered completion holds the host's
  // call, which holds this instance and its library. A call queued on a stopped event loop is such a call: destroy
  // what the loop still holds (docs/plugin-api.md), and answer or drop what the host hands over after stop.
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
  // Messaging: see plugin.h for the reply and the result send completes with. Not overridden: the slot stays NULL
  // and the host fails a final with not_supported; this body only answers a derived class that calls it.
  virtual void send(std::string_view connector_channel_id, std::string_view reply_json, completion done) {
    (void)connector_channel_id;
    (void)reply_json;
    done.ok(R"({"ok":false,"error":"not_supported","retryable":false})");
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
  // The channel ended: "closed", "deregistered" or "expired" (plugin.h on_channel_end); drop what is kept for it.
  virtual void channel_end(std::string_view connector_channel_id, std::string_view reason, completion done) {
    (void)connector_channel_id;
    (void)reason;
    done.ok();
  }
};

// The report of a channel's state (plugin.h xconn_host_channel_status, on_channel_restore); reason, when not empty,
// a short code why, e.g. channel_report("degraded", "target_unreachable").
inline std::string channel_report(std::string_view status, std::string_view reason = {}) {
  return "{\"status\":" + json_quote(status) + (reason.empty() ? "" : ",\"reason\":" + json_quote(reason)) + "}";
}

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

// overrides_HOOK<Plugin>(): the class (or a base between it and plugin) overrides HOOK. &Plugin::HOOK names the
// most derived declaration, so its type is plugin's own exactly when nobody overrode it. A name that is not one
// plain member pointer (overloaded, or not accessible) counts as overridden: the slot is filled, as before.
#define XCONN_SDK_OVERRIDES(hook)                                               \
  template <class Plugin>                                                       \
  constexpr bool overrides_##hook() {                                           \
    if constexpr (requires { &Plugin::hook; })                                  \
      return !std::is_same_v<decltype(&Plugin::hook), decltype(&plugin::hook)>; \
    else                                                                        \
      return true;                                                              \
  }
XCONN_SDK_OVERRIDES(auth_start)
XCONN_SDK_OVERRIDES(auth_status)
XCONN_SDK_OVERRIDES(auth_cancel)
XCONN_SDK_OVERRIDES(auth_logout)
XCONN_SDK_OVERRIDES(send)
XCONN_SDK_OVERRIDES(update)
XCONN_SDK_OVERRIDES(activity)
XCONN_SDK_OVERRIDES(http)
XCONN_SDK_OVERRIDES(http_request)
XCONN_SDK_OVERRIDES(consumer_stop)
XCONN_SDK_OVERRIDES(channel_end)
#undef XCONN_SDK_OVERRIDES

template <class Plugin>
constexpr bool overrides_auth() {
  return overrides_auth_start<Plugin>() || overrides_auth_status<Plugin>() || overrides_auth_cancel<Plugin>() ||
         overrides_auth_logout<Plugin>();
}

// The trampoline of Method for a slot of type Slot, or NULL when the plugin does not serve it.
template <class Slot, auto Method>
Slot slot_if(bool served) {
  if (!served) return nullptr;
  Slot slot = &forward<Method>;
  return slot;
}

inline void http_request_trampoline(void* p, xconn_call* call, const xconn_http_request* r) {
  auto* self = static_cast<instance*>(p);
  guarded(self->host, [&](xconn_call** rescue) {
    plugin::http_request_view view{from_c(r->method), from_c(r->path),         from_c(r->path_param),
                                   from_c(r->query),  from_c(r->headers_json), from_c(r->body)};
    self->object->http_request(view, completion(self->host, call, rescue));
  });
}

template <class Plugin>
const xconn_plugin_api* table_for(uint32_t host_major) {
  using api = xconn_plugin_api;
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
      slot_if<decltype(api::xconn_plugin_on_auth_start), &plugin::auth_start>(overrides_auth<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_auth_status), &plugin::auth_status>(overrides_auth<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_auth_cancel), &plugin::auth_cancel>(overrides_auth<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_auth_logout), &plugin::auth_logout>(overrides_auth<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_send), &plugin::send>(overrides_send<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_update), &plugin::update>(overrides_update<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_activity), &plugin::activity>(overrides_activity<Plugin>()),
      // http_request's default hands the request to http(): either override serves the routes.
      slot_if<decltype(api::xconn_plugin_on_http), &plugin::http>(overrides_http<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_consumer_stop), &plugin::consumer_stop>(overrides_consumer_stop<Plugin>()),
      slot_if<decltype(api::xconn_plugin_on_channel_restore), &plugin::channel_restore>(
          verifies_restored_channels<Plugin>()),
      overrides_http_request<Plugin>() ? &http_request_trampoline : nullptr,
      slot_if<decltype(api::xconn_plugin_on_channel_end), &plugin::channel_end>(overrides_channel_end<Plugin>()),
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
