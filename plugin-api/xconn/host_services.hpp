// The host's services as the C++ SDK hands them to a plugin (plugin.h xconn_host_api): logging and health, emits
// (with a cursor since 1.3), shared consumers, files, the key-value store and channel reports. Included by
// plugin.hpp; a plugin includes that.
#ifndef XCONN_HOST_SERVICES_HPP
#define XCONN_HOST_SERVICES_HPP

#include <xconn/plugin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

  // The key of the shared consumer that material identifies (ABI 1.5, plugin.h xconn_host_consumer_key): 64 hex
  // digits, the same after a restart, of no use for guessing the credential without the host's sealing key. "" on
  // an older host or for material the host refuses (empty, over 64 KiB).
  std::string consumer_key(std::string_view material) const {
    if (!XCONN_HOST_HAS(api_, xconn_host_consumer_key)) return "";
    std::string out(64, '\0');
    auto size = api_->xconn_host_consumer_key(api_->host_ctx, to_c(material), out.data(), out.size());
    if (size != static_cast<int>(out.size())) return "";
    return out;
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

  // put_file that never waits for the store (ABI 1.3; plain put_file on an older host), for a plugin with an event
  // loop of its own: the bytes go in pieces, and while the store is behind the rest follows from a host thread.
  void put_file_nowait(std::string_view connector_channel_id, std::string_view filename, std::string_view mime_type,
                       std::string bytes, std::function<void(file_result)> done) const {
    if (!XCONN_HOST_HAS(api_, xconn_host_file_write_nowait))
      return put_file(connector_channel_id, filename, mime_type, bytes, std::move(done));
    auto* upload = api_->xconn_host_file_begin(api_->host_ctx, to_c(connector_channel_id), to_c(filename),
                                               to_c(mime_type));
    if (!upload) return done({false, {}, {"channel_not_found", "no such channel of this plugin", false}});
    auto feed = std::make_shared<nowait_feed>(nowait_feed{api_, upload, std::move(bytes), 0, std::move(done)});
    nowait_feed::step(feed);
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
  // tools_json, when not empty, a JSON array as in a binding; reason, when not empty, a short code why
  // ([a-z_]{1,64}, e.g. "target_unreachable"). Returns whether the host took it.
  bool set_channel_status(std::string_view connector_channel_id, std::string_view status,
                          std::string_view tools_json = {}, std::string_view reason = {}) const {
    if (!XCONN_HOST_HAS(api_, xconn_host_channel_status)) return false;
    std::string report = "{\"status\":" + json_quote(status);
    if (!tools_json.empty()) report.append(",\"tools\":").append(tools_json);
    if (!reason.empty()) report.append(",\"reason\":").append(json_quote(reason));
    report += "}";
    return api_->xconn_host_channel_status(api_->host_ctx, to_c(connector_channel_id), to_c(report)) == 0;
  }

  // Adds delta to one of the plugin's counters in /metrics (ABI 1.3; nothing on an older host).
  void count(std::string_view name, std::uint64_t delta = 1) const {
    if (XCONN_HOST_HAS(api_, xconn_host_count)) api_->xconn_host_count(api_->host_ctx, to_c(name), delta);
  }

  // The connector's absolute base URL, e.g. "https://xconn.example/connectors/webhook" (ABI 1.4); "" on an older
  // host or before the server listens.
  std::string base_url() const {
    if (!XCONN_HOST_HAS(api_, xconn_host_base_url)) return "";
    std::string out(128, '\0');
    for (;;) {
      auto size = api_->xconn_host_base_url(api_->host_ctx, out.data(), out.size());
      if (size < 0) return "";
      bool fits = static_cast<std::size_t>(size) <= out.size();
      out.resize(static_cast<std::size_t>(size));
      if (fits) return out;
    }
  }

  // xconn_host_file_write_nowait (ABI 1.3): 0 taken, 1 taken and ready runs once when the store has room, -1 failed,
  // -2 while a ready is pending. ready runs on a host pool thread. -1 as well on an older host.
  int write_file_nowait(xconn_file_upload* upload, std::string_view bytes, std::function<void()> ready) const {
    if (!XCONN_HOST_HAS(api_, xconn_host_file_write_nowait)) return -1;
    auto* user = new std::function<void()>(std::move(ready));
    int rc = api_->xconn_host_file_write_nowait(upload, bytes.data(), bytes.size(), &host::ready_once, user);
    if (rc != 1) delete user;  // ready will not run
    return rc;
  }

  // Reads up to size bytes of a file of the channel from offset; -1 when there is no such file there.
  std::int64_t read_file(std::string_view connector_channel_id, std::string_view file_ref, std::uint64_t offset,
                         char* out, std::size_t size) const {
    if (!has_files()) return -1;
    return api_->xconn_host_file_read(api_->host_ctx, to_c(connector_channel_id), to_c(file_ref), offset, out, size);
  }

  // Whether the host deletes kept files (ABI 1.5).
  bool can_delete_files() const { return XCONN_HOST_HAS(api_, xconn_host_file_delete); }
  // Deletes a file this plugin kept on the channel (ABI 1.5, plugin.h xconn_host_file_delete): for the refs of an emit
  // answered as a duplicate, or those kept before a later attachment failed; a file a stored message names must stay.
  // 0 removed, -1 not a kept file of the channel here (or already gone), -2 the store failed (the file stays until
  // files.ttl_s). -1 on an older host, whose files wait for files.ttl_s. Waits for the store: the plugin's threads only.
  int delete_file(std::string_view connector_channel_id, std::string_view file_ref) const {
    if (!can_delete_files()) return -1;
    return api_->xconn_host_file_delete(api_->host_ctx, to_c(connector_channel_id), to_c(file_ref));
  }

  // A file of the channel as it was stored: its name, MIME type and size (ABI 1.7, plugin.h xconn_host_file_info).
  struct file_info {
    std::string filename;
    std::string mime_type;
    std::uint64_t byte_size = 0;
  };
  // Whether the host tells a file's stored name and type (ABI 1.7); an older one gives its bytes alone.
  bool can_describe_files() const { return XCONN_HOST_HAS(api_, xconn_host_file_info); }
  // The stored name, type and size of a file of the channel; nullopt when it is not one of the channel's here, or on
  // an older host (the plugin then names the file itself, e.g. from its first bytes).
  std::optional<file_info> describe_file(std::string_view connector_channel_id, std::string_view file_ref) const {
    if (!can_describe_files()) return std::nullopt;
    file_info info;
    auto visit = [](void* user, xconn_str filename, xconn_str mime_type, uint64_t byte_size) {
      auto& out = *static_cast<file_info*>(user);
      out.filename.assign(filename.data ? filename.data : "", filename.data ? filename.size : 0);
      out.mime_type.assign(mime_type.data ? mime_type.data : "", mime_type.data ? mime_type.size : 0);
      out.byte_size = byte_size;
    };
    if (api_->xconn_host_file_info(api_->host_ctx, to_c(connector_channel_id), to_c(file_ref), visit, &info) != 0)
      return std::nullopt;
    return info;
  }

  // Asks xAgent for a decision on the channel (ABI 1.6, plugin.h xconn_host_approval_request). No Protocol 3.0 packet
  // carries one, so today's host answers done with the failure "unsupported" (and shows it on /events); an older host
  // has no such call and is answered the same here. done runs exactly once, possibly before this returns.
  void request_approval(std::string_view connector_channel_id, std::string_view request_json,
                        std::function<void(emit_result)> done) const {
    if (!XCONN_HOST_HAS(api_, xconn_host_approval_request))
      return done({false, {}, false, {"unsupported", "this host carries no approval requests", false}});
    auto* user = new std::function<void(emit_result)>(std::move(done));
    api_->xconn_host_approval_request(api_->host_ctx, to_c(connector_channel_id), to_c(request_json), &host::emit_done,
                                      user);
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

  // One put_file_nowait: the next piece goes when the last was taken, or when the store says it has room.
  struct nowait_feed {
    const xconn_host_api* api;
    xconn_file_upload* upload;
    std::string bytes;
    std::size_t offset;
    std::function<void(file_result)> done;

    static void step(const std::shared_ptr<nowait_feed>& self) {
      constexpr std::size_t piece = 64 * 1024;
      for (;;) {
        if (self->offset == self->bytes.size()) return finish(self);
        auto at = self->offset;
        auto n = std::min(piece, self->bytes.size() - at);
        self->offset += n;  // before the call: its ready may run on another thread before it returns
        int rc = host(self->api).write_file_nowait(self->upload, std::string_view(self->bytes).substr(at, n),
                                            [self] { step(self); });
        if (rc < 0) return finish(self);  // end says why
        if (rc == 1) return;
      }
    }
    static void finish(const std::shared_ptr<nowait_feed>& self) {
      auto* user = new std::function<void(file_result)>(std::move(self->done));
      self->api->xconn_host_file_end(self->upload, 1, &host::file_done, user);
    }
  };

  static void ready_once(void* user) {
    std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(user));
    try {
      if (*fn) (*fn)();
    } catch (...) {
    }
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

}  // namespace xconn::sdk

#endif  // XCONN_HOST_SERVICES_HPP
