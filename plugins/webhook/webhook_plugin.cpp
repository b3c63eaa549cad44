// The webhook plugin (docs/adapters.md "webhook"): a channel is bound to a receiver URL and a shared secret. Senders
// POST signed JSON to {base}/in/{channel} (a public route this plugin authenticates); each becomes one inbound
// message, answered 202 only once it is durable, with a repeat of its msg_id answered by the first message_id.
// Finals go out as signed POSTs to the receiver on the adapter's event loop. The secret is sealed by the host and
// held here in memory only.
#include "webhook_config.hpp"
#include "webhook_inbound.hpp"
#include "webhook_manifest.hpp"
#include "webhook_signature.hpp"
#include "webhook_url.hpp"
#include "kit/json_fields.hpp"

#include <xconn/adapter/answers.hpp>
#include <xconn/adapter/http_client.hpp>
#include <xconn/adapter/network_adapter.hpp>
#include <xconn/adapter/retry_backoff.hpp>

#include <boost/json.hpp>
// Boost.JSON compiled into this library (header-only mode, hidden); exactly one translation unit includes it.
#include <boost/json/src.hpp>

#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace webhook {
namespace {

namespace json = boost::json;
namespace ad = xconn::adapter;
namespace http = boost::beast::http;
using kind = ad::http_outcome::kind;
using xconn::kit::parse_object;
using xconn::kit::string_at;
using xconn::sdk::kv_batch;
using namespace std::chrono_literals;

constexpr std::string_view flow_id = "webhook_binding";
constexpr std::string_view default_channel_key = "webhook/group/default";
constexpr std::string_view still_down = "the receiver cannot be reached; it is checked again by itself";

std::int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0'), out;
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  for (unsigned char c : raw) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

// "" when the secret holds (16 to 4,096 bytes), else why not.
std::string secret_problem(const std::string& secret) {
  if (secret.size() < 16) return "secret: at least 16 bytes";
  return secret.size() > 4096 ? "secret: at most 4096 bytes" : "";
}

// One answer for an unknown channel, a bad signature and a stale one: a caller learns nothing from which it was.
std::string unauthorized() { return ad::http_error(401, "unauthorized", "missing, stale or invalid X-Xconn-Signature"); }

// One channel bound to its receiver.
struct binding {
  std::string channel;
  std::string outbound_url;
  receiver_url url;
  std::string secret;  // memory only: the host keeps it sealed
  bool down = false;   // the receiver cannot be reached: the channel shows degraded and is probed
};

// A POST's answer: 401 and 403 refuse the channel's signature; another 4xx (or a 3xx) refuses the message.
const ad::outcome_rules rules{{{401, "connection_not_authenticated"}, {403, "connection_not_authenticated"}},
                              "send_failed"};

std::string failure_text(const ad::http_reply& r) {
  return r.reached() ? "the receiver answered " + std::to_string(r.status)
                     : "the receiver could not be reached (" + r.transport_error + ")";
}

class webhook_plugin final : public ad::network_adapter {
 public:
  static std::string manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }
  static std::string validate_config(std::string_view section_json) {
    return config_rows.check_text(section_json, nullptr);
  }
  static constexpr bool verifies_restored_channels = true;

  webhook_plugin(xconn::sdk::host host, std::string_view section_json) : network_adapter(host, "webhook") {
    config_rows.check_text(section_json, &settings_);  // validate_config has passed it
    std::string error;
    ad::http_client::options options;
    options.ca_file = settings_.ca_file;
    options.user_agent = "xconn-webhook";
    options.max_answer_bytes = 1u << 20;  // a receiver's answer is read and dropped
    client_ = std::make_unique<ad::http_client>(io(), std::move(options), &error);
    if (!error.empty()) host.log(XCONN_LOG_WARN, error);
  }
  ~webhook_plugin() override { halt(); }

  void start(completion done) override {
    // An earlier build kept its own msg_id index under "seen/"; the host answers a replay itself now: it goes.
    kv_batch old_index;
    kv_scan("seen/", [&](std::string_view key, std::string_view) {
      old_index.erase(key);
      return true;
    });
    if (!old_index.empty()) host().kv_write(old_index);
    network_adapter::start(std::move(done));
  }

  void auth_start(std::string_view channel, std::string_view flow, std::string_view, std::string_view input_json,
                  completion done) override {
    if (flow != flow_id) return done.fail(ad::no_such_auth_flow());
    auto input = parse_object(input_json).value_or(json::object{});
    auto outbound_url = string_at(input, "outbound_url"), secret = string_at(input, "secret");
    auto url = receiver_url::parse(outbound_url);
    if (!url) return done.fail(ad::invalid_input("outbound_url: must be an http:// or https:// URL"));
    if (auto why = secret_problem(secret); !why.empty()) return done.fail(ad::invalid_input(why));
    spawn(sign_in({std::string(channel), outbound_url, *url, secret}, std::move(done)));
  }

  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override {
    auto secret = string_at(parse_object(credentials_json).value_or(json::object{}), "secret");
    auto outbound_url = kv_get(channel_key(channel)).value_or("");
    auto url = receiver_url::parse(outbound_url);
    // Nothing to ask a receiver: a binding is sound when its URL and secret are.
    if (!url || !secret_problem(secret).empty()) return done.ok(ad::report_expired());
    bind({std::string(channel), outbound_url, *url, secret});
    done.ok(ad::report_connected());
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
      return done.ok(ad::http_error(404, "not_found", "no such route"));
    std::string channel(r.path_param);
    host().count("inbound_requests");
    if (static_cast<std::int64_t>(r.body.size()) > settings_.max_body_bytes)
      return refuse_inbound(done, "inbound_too_large",
                            ad::http_error(413, "payload_too_large", "the body is over policy.max_body_bytes"));
    auto b = binding_of(channel);
    auto signature = string_at(parse_object(r.headers_json).value_or(json::object{}), "x-xconn-signature");
    if (!b || check_signature(signature, b->secret, r.body, now_s()) != signature_check::ok)
      return refuse_inbound(done, "inbound_unauthorized", unauthorized());
    auto read = read_inbound_body(r.body);
    if (auto* bad = std::get_if<body_error>(&read))
      return refuse_inbound(done, "inbound_bad_body", ad::http_error(400, "invalid_body", bad->message, bad->field));
    // A replay of a msg_id is the host's to recognise: it answers it with the first message's id, never before
    // that message is durable (docs/plugin-api.md, the emit).
    spawn(receive(std::move(channel), std::get<json::object>(std::move(read)), std::move(done)));
  }

  void send(std::string_view channel, std::string_view reply_json, completion done) override {
    auto b = binding_of(std::string(channel));
    if (!b) return done.ok(ad::send_not_signed_in());
    auto reply = parse_object(reply_json).value_or(json::object{});
    json::object body{{"message_id", string_at(reply, "idempotency_key")},
                      {"channel_key", string_at(reply, "channel_key")},
                      {"text", string_at(reply, "text")}};
    if (auto* to = reply.if_contains("reply_to"); to && to->is_object()) body["reply_to"] = *to;
    json::array files;
    if (auto* items = reply.if_contains("files"); items && items->is_array())
      for (const auto& item : items->as_array()) {
        if (!item.is_object()) continue;
        json::object file;
        for (std::string_view k : {"file_ref", "filename", "mime_type", "byte_size", "download_url"})
          if (auto* v = item.as_object().if_contains(k)) file[k] = *v;
        files.push_back(std::move(file));
      }
    body["files"] = std::move(files);
    spawn(deliver(std::move(*b), json::serialize(body), std::move(done)));
  }

  void invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view context_json, completion done) override {
    if (tool_id != "webhook_post") return done.fail(ad::no_such_tool());
    auto b = binding_of(std::string(channel));
    if (!b) return done.fail(ad::not_signed_in());
    auto text = string_at(parse_object(arguments_json).value_or(json::object{}), "text");
    if (text.empty()) return done.fail(ad::invalid_argument("text must not be empty"));
    auto call_id = string_at(parse_object(context_json).value_or(json::object{}), "tool_call_id");
    json::object body{{"message_id", call_id.empty() ? "post_" + random_hex(12) : call_id},
                      {"channel_key", last_channel_key(b->channel)},
                      {"text", text},
                      {"files", json::array{}}};
    spawn(post_tool(std::move(*b), json::serialize(body), std::move(done)));
  }

 private:
  static std::string channel_key(std::string_view channel) { return "chan/" + std::string(channel); }

  void on_halted() override { client_->close_idle(); }  // its sockets belong to the loop

  // ---- channels ----

  awaitable<void> sign_in(binding b, completion done) {
    // The URL is kept (it is no credential) so a restart finds it; the secret comes back sealed, from the host.
    auto kept = co_await kv_write(kv_batch().put(channel_key(b.channel), b.outbound_url));
    if (!kept.ok) co_return done.fail(ad::binding_not_kept());
    auto base = base_url();
    // {base}/in/<channel>, absolute as xAgent and senders reach the server (ABI 1.4).
    ad::target_binding shown{b.url.authority, (base.empty() ? "/connectors/webhook" : base) + "/in/" + b.channel};
    bind(std::move(b));
    done.ok(ad::auth_authenticated(shown));
  }

  void bind(binding b) {
    std::lock_guard lock(mutex_);
    auto id = b.channel;
    channels_.insert_or_assign(std::move(id), std::move(b));
  }

  std::optional<binding> binding_of(const std::string& channel) {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(channel);
    return it == channels_.end() ? std::nullopt : std::optional(it->second);
  }

  // Signed out (the URL goes) or ended (what is known of its conversation too). The host keeps the msg_ids.
  void forget(const std::string& channel, bool ended) {
    {
      std::lock_guard lock(mutex_);
      channels_.erase(channel);
      if (ended) last_key_.erase(channel);
    }
    host().kv_write(kv_batch().erase(channel_key(channel)));
  }

  // Whether the channel's down flag changed (not for a channel signed out meanwhile).
  bool set_down(const std::string& channel, bool down) {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(channel);
    if (it == channels_.end() || it->second.down == down) return false;
    it->second.down = down;
    return true;
  }

  std::string last_channel_key(const std::string& channel) {
    std::lock_guard lock(mutex_);
    auto it = last_key_.find(channel);
    return it == last_key_.end() ? std::string(default_channel_key) : it->second;
  }

  // ---- inbound ----

  void refuse_inbound(completion& done, const char* counter, const std::string& answer) {
    host().count(counter);
    done.ok(answer);
  }

  // The HTTP answer to a sender once the host answered its message.
  awaitable<void> receive(std::string channel, json::object message, completion done) {
    auto key_in = string_at(message, "channel_key");
    auto r = co_await emit(channel, json::serialize(message));
    if (r.ok) {
      host().count(r.duplicate ? "inbound_duplicates" : "inbound_accepted");
      if (!r.duplicate) {
        std::lock_guard lock(mutex_);
        last_key_[channel] = key_in.empty() ? std::string(default_channel_key) : key_in;
      }
      // An empty id only for a msg_id an older build of the host took before it kept the first message's id.
      co_return done.ok(r.message_id.empty()
                            ? ad::http_json(202, ad::answer_object().with("message_id", nullptr).with("duplicate", true))
                            : ad::http_json(202, ad::answer_object().with("message_id", json::string_view(r.message_id))));
    }
    if (r.failure.code == "invalid_message") {
      // The host's refusal ("<field>: why"), as a 400 naming the field.
      auto colon = r.failure.message.find(':');
      auto field = colon == std::string::npos ? std::string("body") : r.failure.message.substr(0, colon);
      co_return refuse_inbound(done, "inbound_bad_body", ad::http_error(400, "invalid_body", r.failure.message, field));
    }
    if (r.failure.code == "channel_not_found") co_return refuse_inbound(done, "inbound_unauthorized", unauthorized());
    refuse_inbound(done, "inbound_store_failed",
                   ad::http_error(503, "store_failed", "the message could not be stored; send it again", {},
                                  ad::retry_after_header(1)));
  }

  // ---- outbound ----

  // A request signed as the receiver checks it: X-Xconn-Signature over its body, with a fresh t on each try.
  static ad::http_request signed_request(const binding& b, ad::http_request req) {
    req.headers.emplace_back("X-Xconn-Signature", signature_header(b.secret, now_s(), req.body));
    return req;
  }

  awaitable<ad::http_reply> post_once(const binding& b, const std::string& body, std::chrono::milliseconds timeout) {
    auto req = signed_request(b, {http::verb::post, b.url.target, "application/json", body});
    auto r = co_await client_->send(b.url, std::move(req), timeout);
    host().count("posts");
    if (!r.reached()) host().count(r.transport_error == "timeout" ? "errors_timeout" : "errors_unreachable");
    else if (r.status >= 300) host().count("errors_" + std::to_string(std::min(r.status / 100, 5)) + "xx");
    // What the answer means for the channel: degraded and probed, or revoked.
    if (auto o = outcome_of(r, rules).what; o == kind::unreachable) mark_down(b);
    else if (o == kind::refused) revoke(b);
    co_return r;
  }

  // The receiver could not be reached (no answer, a timeout, a 5xx): the channel shows degraded and a probe checks
  // the receiver 1 s, 2 s, 4 s ... 60 s apart until it answers (the adapters' shared rule).
  void mark_down(const binding& b) {
    if (!set_down(b.channel, true)) return;
    host().count("outages");
    set_channel_status(b.channel, "degraded", "target_unreachable");
    spawn(probe(b));
  }

  // The probe: a HEAD of outbound_url, signed as a POST of an empty body would be, so a receiver can tell it from a
  // stranger's. Any answer but a 5xx means the receiver is there (a 405 too): the channel turns connected. A 401
  // or 403 here turns nothing revoked: only a refused delivery is a verdict on the secret.
  awaitable<void> probe(binding b) {
    ad::retry_backoff backoff;
    for (;;) {
      co_await pause(backoff.next());
      auto now = binding_of(b.channel);  // signed out or bound anew meanwhile: this probe is done
      if (!now || now->outbound_url != b.outbound_url || !now->down) co_return;
      host().count("probes");
      auto r = co_await client_->send(b.url, signed_request(b, ad::http_request::head(b.url.target)),
                                      std::chrono::seconds(settings_.attempt_timeout_s));
      if (!r.reached() || r.status >= 500) continue;
      if (set_down(b.channel, false)) set_channel_status(b.channel, "connected");
      co_return;
    }
  }

  // The receiver refused the channel's signature (401 or 403): the secret is no good there any more. The channel
  // turns revoked (the host deletes the sealed secret; a new sign-in binds it again).
  void revoke(const binding& b) {
    {
      std::lock_guard lock(mutex_);
      if (!channels_.erase(b.channel)) return;
    }
    host().kv_write(kv_batch().erase(channel_key(b.channel)));
    set_channel_status(b.channel, "revoked");
  }

  // One final: POSTed once; a 429 is waited (its Retry-After, else 1, 2, 4, ... s) and tried again while the send
  // budget lasts, every try with the same body, so the same message_id. No answer, a timeout or a 5xx turns the
  // channel degraded (probed in the background) and the final is refused target_unreachable, retryable, at once,
  // as every final is until the probe finds the receiver again.
  awaitable<void> deliver(binding b, std::string body, completion done) {
    if (b.down) co_return done.ok(ad::send_target_unreachable(still_down));
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(settings_.send_budget_s);
    auto backoff = 1s;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      auto attempt = std::chrono::milliseconds(std::chrono::seconds(settings_.attempt_timeout_s));
      auto r = co_await post_once(b, body, std::clamp<std::chrono::milliseconds>(left, 1ms, attempt));
      switch (outcome_of(r, rules).what) {
        case kind::ok:
          host().count("deliveries");
          co_return done.ok(ad::send_delivered_verified(true));
        case kind::unreachable:
          host().count("deliveries_failed");
          co_return done.ok(ad::send_target_unreachable(failure_text(r)));
        case kind::refused:
          host().count("deliveries_refused");
          co_return done.ok(ad::send_refused("connection_not_authenticated", false, failure_text(r) +
                                             ": the receiver refused the channel's signature; sign in again"));
        case kind::rejected:
          // Another 4xx is the receiver's refusal of this message, a 3xx a URL that points elsewhere: no try
          // changes either.
          host().count("deliveries_refused");
          co_return done.ok(ad::send_refused("send_failed", false, failure_text(r)));
        case kind::rate_limited:
          break;
      }
      auto wait = r.retry_after_s >= 0 ? std::chrono::seconds(r.retry_after_s) : std::chrono::seconds(backoff);
      backoff *= 2;
      if (std::chrono::steady_clock::now() + wait >= end) {  // no time left for another try
        host().count("deliveries_failed");
        co_return done.ok(ad::send_refused("rate_limited", true, failure_text(r)));
      }
      host().count("retries");
      co_await pause(wait);
    }
  }

  // webhook_post: one signed POST; the receiver's status, or http_error for anything but 2xx.
  awaitable<void> post_tool(binding b, std::string body, completion done) {
    if (b.down) co_return done.fail(ad::target_unreachable(still_down));
    auto r = co_await post_once(b, body, std::chrono::seconds(settings_.attempt_timeout_s));
    if (outcome_of(r, rules).what == kind::refused)
      co_return done.fail({"connection_not_authenticated", "the receiver refused the channel's signature", false});
    if (!r.reached()) co_return done.fail(ad::target_unreachable(failure_text(r)));
    if (r.status < 200 || r.status >= 300)
      co_return done.fail({"http_error", "the receiver answered HTTP " + std::to_string(r.status),
                           r.status >= 500 || r.status == 429});
    done.ok(ad::tool_sent().with("http_status", r.status).json());
  }

  settings settings_;
  std::unique_ptr<ad::http_client> client_;
  std::mutex mutex_;
  std::map<std::string, binding> channels_;      // signed-in channels of this run, by channel id
  std::map<std::string, std::string> last_key_;  // the channel_key of a channel's latest inbound message
};

}  // namespace
}  // namespace webhook

XCONN_PLUGIN(webhook::webhook_plugin)
