// The webhook plugin (docs/adapters.md "webhook"): a channel is bound to a receiver URL and a shared secret. Senders
// POST signed JSON to {base}/in/{channel} (a public route this plugin authenticates); each becomes one inbound
// message, answered 202 only once it is durable, with a repeat of its msg_id answered by the first message_id.
// Finals go out as signed POSTs to the receiver, retried with backoff within the send budget. The secret is sealed
// by the host and held here in memory only; every POST runs on the plugin's own event loop (one thread).
#include "receiver_client.hpp"
#include "kit/retry_backoff.hpp"
#include "webhook_config.hpp"
#include "webhook_inbound.hpp"
#include "webhook_manifest.hpp"
#include "webhook_signature.hpp"
#include "webhook_url.hpp"
#include "kit/guarded_spawn.hpp"
#include "kit/json_fields.hpp"

#include <xconn/plugin.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
// Boost.JSON compiled into this library (header-only mode, hidden); exactly one translation unit includes it.
#include <boost/json/src.hpp>

#include <openssl/rand.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace webhook {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using asio::use_awaitable;
using xconn::sdk::completion;
using xconn::sdk::http_answer;
using xconn::sdk::kv_batch;
using namespace std::chrono_literals;

constexpr std::string_view flow_id = "webhook_binding";
constexpr std::size_t min_secret_bytes = 16;
constexpr std::size_t max_secret_bytes = 4096;
constexpr std::string_view default_channel_key = "webhook/group/default";

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

using xconn::kit::parse_object;
using xconn::kit::string_at;

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  RAND_bytes(raw.data(), static_cast<int>(raw.size()));
  std::string out;
  for (unsigned char c : raw) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

// {"error": {"code", "message"[, "field"]}}, the host's own error shape.
std::string error_body(std::string_view code, std::string_view message, std::string_view field = {}) {
  json::object e{{"code", code}, {"message", message}};
  if (!field.empty()) e["field"] = field;
  return json::serialize(json::object{{"error", std::move(e)}});
}

std::string unauthorized() {
  // One answer for an unknown channel, a bad signature and a stale one: a caller learns nothing from which it was.
  return http_answer(401, error_body("unauthorized", "missing, stale or invalid X-Xconn-Signature"));
}

// The host's refusal of an emit ("<field>: why"), as a 400 naming the field.
std::string refused_body(const std::string& message) {
  auto colon = message.find(':');
  auto field = colon == std::string::npos ? std::string("body") : message.substr(0, colon);
  return http_answer(400, error_body("invalid_body", message, field));
}

// One channel bound to its receiver.
struct binding {
  std::string channel;
  std::string outbound_url;
  receiver_url url;
  std::string secret;  // memory only: the host keeps it sealed
};

// What inbound requests and emit callbacks share; held by a shared_ptr, so a late callback never outlives it.
struct shared_state {
  std::mutex mutex;
  std::map<std::string, binding> channels;          // signed-in channels of this run, by channel id
  std::map<std::string, std::string> last_key;      // the channel_key of a channel's latest inbound message
  std::set<std::string> down;                       // channels whose receiver cannot be reached (degraded, probed)
};

class webhook_plugin final : public xconn::sdk::plugin {
 public:
  static std::string manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }
  static std::string validate_config(std::string_view section_json) {
    auto section = parse_object(section_json);
    return section ? check_section(*section, nullptr) : "section: must be a JSON object";
  }
  static constexpr bool verifies_restored_channels = true;

  webhook_plugin(xconn::sdk::host host, std::string_view section_json) : host_(host) {
    if (auto section = parse_object(section_json)) check_section(*section, &settings_);
    std::string error;
    client_ = std::make_unique<receiver_client>(io_, settings_.ca_file, &error);
    if (!error.empty()) host_.log(XCONN_LOG_WARN, error);
  }
  ~webhook_plugin() override { halt(); }

  void start(completion done) override {
    // An earlier build kept its own msg_id index under "seen/"; the host answers a replay itself now: it goes.
    kv_batch old_index;
    host_.kv_scan("seen/", [&](std::string_view key, std::string_view) {
      old_index.erase(key);
      return true;
    });
    if (!old_index.empty()) host_.kv_write(old_index);
    runner_ = std::thread([this] { io_.run(); });
    done.ok();
  }
  void stop(completion done) override {
    halt();
    done.ok();
  }

  void auth_start(std::string_view channel, std::string_view flow, std::string_view, std::string_view input_json,
                  completion done) override {
    if (flow != flow_id) return done.fail({"auth_flow_not_found", "no such auth flow", false});
    auto input = parse_object(input_json).value_or(json::object{});
    auto outbound_url = string_at(input, "outbound_url");
    auto secret = string_at(input, "secret");
    auto url = receiver_url::parse(outbound_url);
    if (!url) return done.fail({"invalid_input", "outbound_url: must be an http:// or https:// URL", false});
    if (secret.size() < min_secret_bytes) return done.fail({"invalid_input", "secret: at least 16 bytes", false});
    if (secret.size() > max_secret_bytes) return done.fail({"invalid_input", "secret: at most 4096 bytes", false});
    binding b{std::string(channel), outbound_url, *url, secret};
    // The URL is kept (it is no credential) so a restart finds it; the secret comes back sealed, from the host.
    auto call = std::make_shared<completion>(std::move(done));
    json::object binding_json{{"display_name", b.url.authority}, {"account_hint", inbound_url(b.channel)}};
    auto kept = kv_batch().put(channel_key(b.channel), outbound_url);  // before b moves into the callback
    host_.kv_write(kept,
                   [state = state_, b = std::move(b), binding_json = std::move(binding_json),
                    call](xconn::sdk::kv_result r) mutable {
                     if (!r.ok) return call->fail({"store_failed", "the binding could not be kept", true});
                     bind(state, std::move(b));
                     call->ok(json::serialize(
                         json::object{{"status", "authenticated"}, {"binding", std::move(binding_json)}}));
                   });
  }

  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override {
    auto credentials = parse_object(credentials_json).value_or(json::object{});
    auto secret = string_at(credentials, "secret");
    auto outbound_url = host_.kv_get(channel_key(channel)).value_or("");
    auto url = receiver_url::parse(outbound_url);
    // Nothing to ask a receiver: a binding is sound when its URL and secret are.
    if (!url || secret.size() < min_secret_bytes || secret.size() > max_secret_bytes)
      return done.ok(xconn::sdk::channel_report("expired"));
    bind(state_, {std::string(channel), outbound_url, *url, secret});
    done.ok(xconn::sdk::channel_report("connected"));
  }

  void auth_logout(std::string_view channel, completion done) override {
    forget(std::string(channel), false);
    done.ok();
  }
  void channel_end(std::string_view channel, std::string_view reason, completion done) override {
    if (reason != "closed") forget(std::string(channel), true);
    done.ok();
  }

  void http_request(const http_request_view& r, completion done) override {
    if (r.path_param.empty() || r.path != "/in/" + std::string(r.path_param))
      return done.ok(http_answer(404, error_body("not_found", "no such route")));
    receive(std::string(r.path_param), r.headers_json, r.body, std::make_shared<completion>(std::move(done)));
  }

  void send(std::string_view channel, std::string_view reply_json, completion done) override {
    auto b = binding_of(std::string(channel));
    if (!b) return done.ok(R"({"ok":false,"error":"connection_not_authenticated","retryable":false})");
    auto reply = parse_object(reply_json).value_or(json::object{});
    auto message_id = string_at(reply, "idempotency_key");
    json::object body{{"message_id", message_id}, {"channel_key", string_at(reply, "channel_key")},
                      {"text", string_at(reply, "text")}};
    if (auto* to = reply.if_contains("reply_to"); to && to->is_object()) body["reply_to"] = *to;
    json::array files;
    if (auto* items = reply.if_contains("files"); items && items->is_array())
      for (const auto& item : items->as_array()) {
        if (!item.is_object()) continue;
        const auto& f = item.as_object();
        json::object out;
        for (std::string_view k : {"file_ref", "filename", "mime_type", "byte_size", "download_url"})
          if (auto* v = f.if_contains(k)) out[k] = *v;
        files.push_back(std::move(out));
      }
    body["files"] = std::move(files);
    spawn(deliver(std::move(*b), json::serialize(body), std::move(done)));
  }

  void invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view context_json, completion done) override {
    if (tool_id != "webhook_post") return done.fail({"tool_not_found", "no such tool", false});
    auto b = binding_of(std::string(channel));
    if (!b) return done.fail({"connection_not_authenticated", "the channel is not signed in", false});
    auto args = parse_object(arguments_json).value_or(json::object{});
    auto text = string_at(args, "text");
    if (text.empty()) return done.fail({"invalid_argument", "text must not be empty", false});
    auto context = parse_object(context_json).value_or(json::object{});
    auto call_id = string_at(context, "tool_call_id");
    std::string channel_key_now;
    {
      std::lock_guard lock(state_->mutex);
      auto it = state_->last_key.find(b->channel);
      channel_key_now = it == state_->last_key.end() ? std::string(default_channel_key) : it->second;
    }
    json::object body{{"message_id", call_id.empty() ? "post_" + random_hex(12) : call_id},
                      {"channel_key", channel_key_now},
                      {"text", text},
                      {"files", json::array{}}};
    spawn(post_tool(std::move(*b), json::serialize(body), std::move(done)));
  }

 private:
  static std::string channel_key(std::string_view channel) { return "chan/" + std::string(channel); }

  // {base}/in/<channel>, absolute as xAgent and senders reach the server (ABI 1.4).
  std::string inbound_url(const std::string& channel) const {
    auto base = host_.base_url();
    if (base.empty()) base = "/connectors/webhook";
    return base + "/in/" + channel;
  }

  static void bind(const std::shared_ptr<shared_state>& state, binding b) {
    std::lock_guard lock(state->mutex);
    state->down.erase(b.channel);
    auto id = b.channel;
    state->channels.insert_or_assign(std::move(id), std::move(b));
  }

  std::optional<binding> binding_of(const std::string& channel) {
    std::lock_guard lock(state_->mutex);
    auto it = state_->channels.find(channel);
    return it == state_->channels.end() ? std::nullopt : std::optional(it->second);
  }

  // Signed out (the URL goes) or ended (what is known of its conversation too). The host keeps the msg_ids.
  void forget(const std::string& channel, bool ended) {
    kv_batch batch;
    batch.erase(channel_key(channel));
    {
      std::lock_guard lock(state_->mutex);
      state_->channels.erase(channel);
      state_->down.erase(channel);
      if (ended) state_->last_key.erase(channel);
    }
    host_.kv_write(batch);
  }

  // ---- inbound ----

  void receive(const std::string& channel, std::string_view headers_json, std::string_view raw_body,
               std::shared_ptr<completion> call) {
    host_.count("inbound_requests");
    if (static_cast<std::int64_t>(raw_body.size()) > settings_.max_body_bytes) {
      host_.count("inbound_too_large");
      return call->ok(http_answer(413, error_body("payload_too_large", "the body is over policy.max_body_bytes")));
    }
    auto b = binding_of(channel);
    auto headers = parse_object(headers_json).value_or(json::object{});
    auto signature = string_at(headers, "x-xconn-signature");
    if (!b || check_signature(signature, b->secret, raw_body, now_ms() / 1000) != signature_check::ok) {
      host_.count("inbound_unauthorized");
      return call->ok(unauthorized());
    }
    auto read = read_inbound_body(raw_body);
    if (auto* bad = std::get_if<body_error>(&read)) {
      host_.count("inbound_bad_body");
      return call->ok(http_answer(400, error_body("invalid_body", bad->message, bad->field)));
    }
    // A replay of a msg_id is the host's to recognise: it answers it with the first message's id, never before
    // that message is durable (docs/plugin-api.md, the emit).
    emit_message(channel, json::serialize(std::get<json::object>(std::move(read))), std::move(call));
  }

  static std::string accepted_answer(const std::string& message_id) {
    // "" only for a msg_id an older build of the host took before it kept the first message's id.
    if (message_id.empty()) return http_answer(202, R"({"message_id":null,"duplicate":true})");
    return http_answer(202, json::serialize(json::object{{"message_id", message_id}}));
  }

  void emit_message(const std::string& channel, const std::string& message_json, std::shared_ptr<completion> call) {
    // The callback holds what it uses (never this): the host may answer an emit on any thread, at any time.
    auto channel_key_in = string_at(parse_object(message_json).value_or(json::object{}), "channel_key");
    host_.emit(channel, message_json, [state = state_, host = host_, channel, channel_key_in,
                                       call = std::move(call)](xconn::sdk::emit_result r) {
      call->ok(answer_to(state, host, channel, channel_key_in, r));
    });
  }

  // The HTTP answer to a sender for the host's answer to its message.
  static std::string answer_to(const std::shared_ptr<shared_state>& state, xconn::sdk::host host,
                               const std::string& channel, const std::string& channel_key_in,
                               const xconn::sdk::emit_result& r) {
    if (r.ok && !r.duplicate) {
      host.count("inbound_accepted");
      std::lock_guard lock(state->mutex);
      state->last_key[channel] = channel_key_in.empty() ? std::string(default_channel_key) : channel_key_in;
      return accepted_answer(r.message_id);
    }
    if (r.ok) {
      host.count("inbound_duplicates");
      return accepted_answer(r.message_id);
    }
    if (r.failure.code == "invalid_message") {
      host.count("inbound_bad_body");
      return refused_body(r.failure.message);
    }
    if (r.failure.code == "channel_not_found") {
      host.count("inbound_unauthorized");
      return unauthorized();
    }
    host.count("inbound_store_failed");
    return http_answer(503, error_body("store_failed", "the message could not be stored; send it again"),
                       "application/json", R"({"Retry-After":"1"})");
  }

  // ---- outbound ----

  // Every coroutine runs on the plugin's event loop, guarded: an exception is logged, never let out of it.
  void spawn(awaitable<void> work) { xconn::kit::spawn_guarded(io_, host_, "webhook", std::move(work)); }

  void halt() {
    work_.reset();
    io_.stop();
    if (runner_.joinable()) runner_.join();
    client_->close_idle();  // its sockets belong to io_, which goes before client_
  }

  awaitable<post_result> post_once(const binding& b, const std::string& body, std::chrono::milliseconds timeout) {
    receiver_client::header_list headers;
    headers.emplace_back("X-Xconn-Signature", signature_header(b.secret, now_ms() / 1000, body));
    auto r = co_await client_->post(b.url, body, headers, timeout);
    host_.count("posts");
    if (!r.reached()) host_.count(r.transport_error == "timeout" ? "errors_timeout" : "errors_unreachable");
    else if (r.http_status >= 500) host_.count("errors_5xx");
    else if (r.http_status >= 400) host_.count("errors_4xx");
    else if (r.http_status >= 300) host_.count("errors_3xx");
    co_return r;
  }

  static std::string failure_text(const post_result& r) {
    return r.reached() ? "the receiver answered " + std::to_string(r.http_status)
                       : "the receiver could not be reached (" + r.transport_error + ")";
  }

  bool is_down(const std::string& channel) {
    std::lock_guard lock(state_->mutex);
    return state_->down.contains(channel);
  }

  // A status pushed to the host; reason a short code ("" for none).
  void report_status(const std::string& channel, const std::string& status, const std::string& reason) {
    host_.set_channel_status(channel, status, {}, reason);
  }

  // The receiver could not be reached (no answer, a timeout, a 5xx): the channel shows degraded and a probe checks
  // the receiver 1 s, 2 s, 4 s ... 60 s apart until it answers (the adapters' shared rule).
  void mark_down(const binding& b) {
    {
      std::lock_guard lock(state_->mutex);
      if (!state_->channels.contains(b.channel) || !state_->down.insert(b.channel).second) return;
    }
    host_.count("outages");
    report_status(b.channel, "degraded", "target_unreachable");
    spawn(probe(b));
  }

  // The probe: a HEAD of outbound_url, signed as a POST of an empty body would be, so a receiver can tell it from a
  // stranger's. Any answer but a 5xx means the receiver is there (a 405 too): the channel turns connected. A 401
  // or 403 here turns nothing revoked: only a refused delivery is a verdict on the secret.
  awaitable<void> probe(binding b) {
    xconn::kit::retry_backoff backoff;
    for (;;) {
      asio::steady_timer pause(io_, backoff.next());
      co_await pause.async_wait(use_awaitable);
      {
        std::lock_guard lock(state_->mutex);
        auto it = state_->channels.find(b.channel);
        bool same_binding = it != state_->channels.end() && it->second.outbound_url == b.outbound_url;
        if (!same_binding || !state_->down.contains(b.channel)) co_return;  // signed out or bound anew meanwhile
      }
      receiver_client::header_list headers;
      headers.emplace_back("X-Xconn-Signature", signature_header(b.secret, now_ms() / 1000, ""));
      host_.count("probes");
      auto r = co_await client_->head(b.url, headers, std::chrono::seconds(settings_.attempt_timeout_s));
      if (!r.reached() || r.http_status >= 500) continue;
      {
        std::lock_guard lock(state_->mutex);
        if (!state_->down.erase(b.channel) || !state_->channels.contains(b.channel)) co_return;
      }
      report_status(b.channel, "connected", "");
      co_return;
    }
  }

  // The receiver refused the channel's signature (401 or 403): the secret is no good there any more. The channel
  // turns revoked (the host deletes the sealed secret; a new sign-in binds it again).
  void revoke(const binding& b) {
    {
      std::lock_guard lock(state_->mutex);
      if (!state_->channels.erase(b.channel)) return;
      state_->down.erase(b.channel);
    }
    host_.kv_write(kv_batch().erase(channel_key(b.channel)));
    report_status(b.channel, "revoked", "");
  }

  static bool refuses_signature(const post_result& r) {
    return r.reached() && (r.http_status == 401 || r.http_status == 403);
  }
  static bool unreachable(const post_result& r) { return !r.reached() || r.http_status >= 500; }

  // One final: POSTed once; a 429 is waited (its Retry-After, else 1, 2, 4, ... s) and tried again while the send
  // budget lasts, every try with the same body, so the same message_id. No answer, a timeout or a 5xx turns the
  // channel degraded (probed in the background) and the final is refused target_unreachable, retryable, at once,
  // as every final is until the probe finds the receiver again.
  awaitable<void> deliver(binding b, std::string body, completion done) {
    if (is_down(b.channel))
      co_return done.ok(unreachable_answer("the receiver cannot be reached; it is checked again by itself"));
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(settings_.send_budget_s);
    auto backoff = 1s;
    post_result last;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      auto timeout = std::min<std::chrono::milliseconds>(std::max<std::chrono::milliseconds>(left, 1ms),
                                                         std::chrono::seconds(settings_.attempt_timeout_s));
      last = co_await post_once(b, body, timeout);
      if (last.reached() && last.http_status >= 200 && last.http_status < 300) {
        host_.count("deliveries");
        co_return done.ok(R"({"ok":true,"verified":true})");
      }
      if (unreachable(last)) {
        host_.count("deliveries_failed");
        mark_down(b);
        co_return done.ok(unreachable_answer(failure_text(last)));
      }
      if (refuses_signature(last)) {
        host_.count("deliveries_refused");
        revoke(b);
        co_return done.ok(json::serialize(json::object{{"ok", false}, {"error", "connection_not_authenticated"},
                                                       {"retryable", false}, {"message", failure_text(last) +
                                                        ": the receiver refused the channel's signature; sign in again"}}));
      }
      // Another 4xx is the receiver's refusal of this message, and a 3xx a URL that points elsewhere: no try
      // changes either. A 429 asks to wait, so it is waited.
      if (last.http_status != 429) {
        host_.count("deliveries_refused");
        co_return done.ok(json::serialize(
            json::object{{"ok", false}, {"error", "send_failed"}, {"retryable", false}, {"message", failure_text(last)}}));
      }
      auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(backoff);
      if (last.retry_after_s >= 0) wait = std::chrono::seconds(last.retry_after_s);
      backoff *= 2;
      if (std::chrono::steady_clock::now() + wait >= end) break;  // no time left for another try
      host_.count("retries");
      asio::steady_timer pause(io_, wait);
      co_await pause.async_wait(use_awaitable);
    }
    host_.count("deliveries_failed");
    done.ok(json::serialize(
        json::object{{"ok", false}, {"error", "rate_limited"}, {"retryable", true}, {"message", failure_text(last)}}));
  }

  static std::string unreachable_answer(const std::string& message) {
    return json::serialize(
        json::object{{"ok", false}, {"error", "target_unreachable"}, {"retryable", true}, {"message", message}});
  }

  // webhook_post: one signed POST; the receiver's status, or http_error for anything but 2xx.
  awaitable<void> post_tool(binding b, std::string body, completion done) {
    if (is_down(b.channel))
      co_return done.fail({"target_unreachable", "the receiver cannot be reached; it is checked again by itself", true});
    auto timeout = std::chrono::milliseconds(std::chrono::seconds(settings_.attempt_timeout_s));
    auto r = co_await post_once(b, body, timeout);
    if (unreachable(r)) mark_down(b);
    if (refuses_signature(r)) {
      revoke(b);
      co_return done.fail({"connection_not_authenticated", "the receiver refused the channel's signature", false});
    }
    if (!r.reached())
      co_return done.fail({"target_unreachable", "the receiver could not be reached (" + r.transport_error + ")", true});
    if (r.http_status < 200 || r.http_status >= 300)
      co_return done.fail({"http_error", "the receiver answered HTTP " + std::to_string(r.http_status),
                           r.http_status >= 500 || r.http_status == 429});
    done.ok(json::serialize(json::object{{"status", "sent"}, {"http_status", r.http_status}}));
  }

  xconn::sdk::host host_;
  settings settings_;
  std::shared_ptr<shared_state> state_ = std::make_shared<shared_state>();
  // Before io_: the coroutines io_ still holds at destruction are destroyed while the client they use exists.
  std::unique_ptr<receiver_client> client_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{io_.get_executor()};
  std::thread runner_;
};

}  // namespace
}  // namespace webhook

XCONN_PLUGIN(webhook::webhook_plugin)
