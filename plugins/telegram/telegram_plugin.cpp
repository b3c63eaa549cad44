// The telegram plugin (docs/adapters.md "telegram"): a bot bound to a chat per channel, one getUpdates long poll per
// bot token shared by its channels (a host shared consumer), the update offset committed with the messages it
// produced (emit_with), the token sealed by the host and handed back at restore. Every Bot API call runs on the
// plugin's own event loop (one thread), never on a host thread.
#include "bot_api.hpp"
#include <xconn/adapter/event_loop.hpp>
#include "telegram_manifest.hpp"
#include "telegram_config.hpp"
#include "telegram_json.hpp"
#include "telegram_text.hpp"
#include "telegram_offset.hpp"
#include "telegram_updates.hpp"
#include "telegram_verdict.hpp"
#include <xconn/adapter/health_board.hpp>
#include "kit/retry_backoff.hpp"
#include "kit/consumer_key.hpp"
#include "kit/emit_refusal.hpp"
#include "kit/guarded_spawn.hpp"

#include <xconn/plugin.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
// Boost.JSON compiled into this library (header-only mode, hidden); exactly one translation unit includes it.
#include <boost/json/src.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

namespace telegram {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using xconn::adapter::event_loop;
using xconn::adapter::health_board;
using asio::awaitable;
using asio::use_awaitable;
using xconn::sdk::completion;
using xconn::sdk::kv_batch;
using namespace std::chrono_literals;

constexpr auto call_timeout = 15s;
constexpr std::size_t max_media_bytes = 50u << 20;  // above the Bot API's own 20 MB download limit


// The shared consumer of a bot token: the host's HMAC of it (kit/consumer_key.hpp), so the key names no secret.
std::string token_key(const xconn::sdk::host& host, std::string_view token) {
  return xconn::kit::consumer_key(host, "bot-", token);
}

class telegram_plugin final : public xconn::sdk::plugin {
 public:
  static std::string manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }
  static std::string validate_config(std::string_view section_json) {
    auto section = parse_object(section_json);
    return section ? check_section(*section, nullptr) : "section: must be a JSON object";
  }

  telegram_plugin(xconn::sdk::host host, std::string_view section_json) : host_(host), health_(host) {
    if (auto section = parse_object(section_json)) check_section(*section, &settings_);
    auto endpoint = api_endpoint::parse(settings_.api_base_url);
    std::string error;
    auto proxy = settings_.proxy.empty() ? std::nullopt : proxy_url::parse(settings_.proxy);
    api_ = std::make_unique<bot_api>(io_, *endpoint, settings_.ca_file, &error, proxy);
    if (!error.empty()) host_.log(XCONN_LOG_WARN, error);
  }
  ~telegram_plugin() override { halt(); }

  void start(completion done) override {
    runner_ = std::thread([this] { io_.run(); });
    done.ok();
  }
  void stop(completion done) override {
    halt();
    done.ok();
  }

  void auth_start(std::string_view channel, std::string_view flow_id, std::string_view, std::string_view input_json,
                  completion done) override {
    if (flow_id != "telegram_bot_binding") return done.fail({"auth_flow_not_found", "no such auth flow", false});
    auto input = parse_object(input_json).value_or(json::object{});
    spawn(sign_in(std::string(channel), string_at(input, "bot_token"), string_at(input, "chat_id"), std::move(done)));
  }

  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override {
    auto credentials = parse_object(credentials_json).value_or(json::object{});
    auto chat = host_.kv_get("chat/" + std::string(channel));
    spawn(restore(std::string(channel), string_at(credentials, "bot_token"), chat.value_or(""), std::move(done)));
  }
  static constexpr bool verifies_restored_channels = true;

  void auth_logout(std::string_view channel, completion done) override {
    forget(std::string(channel));
    done.ok();
  }
  void channel_end(std::string_view channel, std::string_view reason, completion done) override {
    if (reason != "closed") forget(std::string(channel));
    done.ok();
  }
  void consumer_stop(std::string_view key, completion done) override {
    std::lock_guard lock(mutex_);
    if (auto it = pollers_.find(std::string(key)); it != pollers_.end()) {
      it->second->stopping = true;
      pollers_.erase(it);
    }
    done.ok();
  }

  void send(std::string_view channel, std::string_view reply_json, completion done) override {
    auto reply = parse_object(reply_json).value_or(json::object{});
    auto b = binding_of(std::string(channel));
    if (!b && awaiting_check(std::string(channel)))
      return done.ok(R"({"ok":false,"error":"target_unreachable","retryable":true})");
    if (!b) return done.ok(R"({"ok":false,"error":"connection_not_authenticated","retryable":false})");
    if (auto* files = reply.if_contains("files"); files && files->is_array() && !files->as_array().empty())
      return spawn(send_files(*b, string_at(reply, "text"), files->as_array(), std::move(done)));
    spawn(send_text(*b, string_at(reply, "text"), string_at(reply, "idempotency_key"), std::move(done)));
  }

  // A delta: the first creates the Telegram message, later ones edit it, with at most one delta edit a second in a
  // chat (the latest text wins); the final edits it to the whole text (send).
  void update(std::string_view channel, std::string_view message_id, std::string_view text_so_far,
              completion done) override {
    auto b = binding_of(std::string(channel));
    if (!b) return done.ok();
    spawn(live_update(*b, std::string(message_id), std::string(text_so_far)));
    done.ok();
  }

  void activity(std::string_view channel, std::string_view status, std::string_view, completion done) override {
    auto b = binding_of(std::string(channel));
    if (b && status != "idle") spawn(chat_action(*b));
    done.ok();
  }

  void invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view, completion done) override {
    auto b = binding_of(std::string(channel));
    if (!b && awaiting_check(std::string(channel)))
      return done.fail({"target_unreachable", "Telegram has not answered since the restart; it is asked again", true});
    if (!b) return done.fail({"connection_not_authenticated", "the channel is not signed in", false});
    auto args = parse_object(arguments_json).value_or(json::object{});
    if (tool_id == "telegram_message_send") return spawn(send_tool(*b, string_at(args, "text"), std::move(done)));
    if (tool_id == "telegram_message_send_media") return spawn(send_media_tool(*b, args, std::move(done)));
    done.fail({"tool_not_found", "no such tool", false});
  }

 private:
  struct binding {
    std::string channel;
    std::string token;
    std::string key;      // token_key(host_, token): the shared poller
    std::string chat_id;  // Telegram's integer id, as text
  };
  // One assistant message shown live (deltas as edits), by channel and message id.
  struct live_message {
    std::string telegram_id;  // "" until sendMessage answered
    std::string shown;        // the text Telegram has
    std::string latest;       // the newest text the host gave
    bool busy = false;        // a send or edit is on its way; it picks up `latest` when it returns
  };
  struct poller {
    std::string token;
    std::string key;
    std::atomic<bool> stopping{false};
  };
  // A restored channel Telegram did not answer for: checked again with backoff until it answers.
  struct pending_check {
    std::string token;
    std::string chat_id;
    std::uint64_t run = 0;  // which check loop owns it (a new restore or sign-in replaces it)
  };

  // Every coroutine runs on the plugin's event loop, guarded: an exception is logged, never let out of it. After
  // stop it is dropped unstarted: its completion answers the call plugin_dropped_call.
  void spawn(awaitable<void> work) {
    io_.unless_dropped([&] { xconn::kit::spawn_guarded(io_, host_, "telegram", std::move(work)); });
  }

  // Runs a host callback API as an awaitable: start(resume) gets a callback that resumes the coroutine with its
  // value, from whatever thread the host calls it on (after stop, the coroutine is dropped instead).
  template <class T, class Start>
  awaitable<T> host_call(Start start) {
    return asio::async_initiate<decltype(use_awaitable), void(T)>(
        [this, start = std::move(start)](auto handler) mutable {
          auto h = std::make_shared<decltype(handler)>(std::move(handler));
          start([this, h](T value) mutable {
            io_.post_or_drop([h, value = std::move(value)]() mutable { (*h)(std::move(value)); });
          });
        },
        use_awaitable);
  }

  void halt() {
    {
      std::lock_guard lock(mutex_);
      for (auto& [key, p] : pollers_) p->stopping = true;
      pollers_.clear();
    }
    work_.reset();
    io_.stop();
    if (runner_.joinable()) runner_.join();
    // A call in flight (a restore, a send) waits in io_ with its completion: dropped now, the host gets its answer
    // and lets this instance go; left queued, it would keep it alive for good.
    io_.drop_pending();
    api_->close_idle();  // its sockets belong to io_, which goes before api_
  }

  std::optional<binding> binding_of(const std::string& channel) {
    std::lock_guard lock(mutex_);
    auto it = channels_.find(channel);
    return it == channels_.end() ? std::nullopt : std::optional(it->second);
  }

  void forget(const std::string& channel) {
    {
      std::lock_guard lock(mutex_);
      channels_.erase(channel);
    }
    stop_checking(channel);
    host_.kv_write(kv_batch().erase("chat/" + channel));
  }

  // The channel is bound: remembered, its chat kept, and its bot's poller held (started by the first channel).
  void bind(binding b) {
    stop_checking(b.channel);
    if (host_.acquire_consumer(b.channel, b.key) < 0) host_.log(XCONN_LOG_WARN, "telegram: a consumer was refused");
    std::shared_ptr<poller> started;
    {
      std::lock_guard lock(mutex_);
      channels_[b.channel] = b;
      if (!pollers_.contains(b.key)) {
        started = std::make_shared<poller>();
        started->token = b.token;
        started->key = b.key;
        pollers_[b.key] = started;
      }
    }
    if (started) spawn(poll(started));
  }

  // Every Bot API call goes through here: a 429 holds every later call for that token until retry_after has passed
  // (docs/adapters.md), and a call made meanwhile waits first.
  awaitable<void> wait_for_hold(const std::string& token) {
    for (;;) {
      std::chrono::steady_clock::time_point until;
      {
        std::lock_guard lock(mutex_);
        auto it = hold_until_.find(token_key(host_, token));
        if (it == hold_until_.end() || it->second <= std::chrono::steady_clock::now()) co_return;
        until = it->second;
      }
      asio::steady_timer wait(io_, until);
      co_await wait.async_wait(use_awaitable);
    }
  }
  // What /metrics shows of the target (xconn_plugin_events_total): polls, updates, sends, edits, rate-limit waits,
  // errors by HTTP status.
  void count(const std::string& method, const api_reply& r) {
    if (!r.reached()) return host_.count("errors_unreachable");
    if (!r.ok) {
      host_.count("errors_" + std::to_string(r.http_status));
      if (r.http_status == 429) host_.count("rate_limit_waits");
      return;
    }
    if (method == "getUpdates") {
      host_.count("polls");
      if (r.result.is_array()) host_.count("updates", r.result.as_array().size());
    } else if (method == "editMessageText") {
      host_.count("edits");
    } else if (method.starts_with("send") && method != "sendChatAction") {
      host_.count("sends");
    }
  }

  void note_hold(const std::string& token, const api_reply& r) {
    if (r.http_status != 429) return;
    std::lock_guard lock(mutex_);
    hold_until_[token_key(host_, token)] =
        std::chrono::steady_clock::now() + std::chrono::seconds(std::max(1, r.retry_after_s));
  }
  awaitable<api_reply> call(const std::string& token, const std::string& method, const json::object& params,
                            std::chrono::seconds timeout) {
    co_await wait_for_hold(token);
    auto r = co_await api_->call(token, method, params, timeout);
    note_hold(token, r);
    count(method, r);
    co_return r;
  }
  awaitable<api_reply> upload(const std::string& token, const std::string& method, const json::object& fields,
                              const file_part& file, std::chrono::seconds timeout) {
    co_await wait_for_hold(token);
    auto r = co_await api_->upload(token, method, fields, file, timeout);
    note_hold(token, r);
    count(method, r);
    co_return r;
  }

  awaitable<void> sign_in(std::string channel, std::string token, std::string chat_input, completion done) {
    auto me = co_await call(token, "getMe", no_params(), call_timeout);
    if (auto v = token_verdict(me); v != verdict::accepted) co_return done.fail(sign_in_refusal(v, me));
    const auto& bot = me.result.as_object();
    auto bot_id = id_text(bot.if_contains("id"));
    auto username = string_at(bot, "username");
    if (chat_input == bot_id) co_return done.fail({"invalid_chat", "the chat id is the bot's own id", false});
    // GCC 12 miscompiles braced initializers inside a co_await expression: parameters are built beforehand.
    json::object chat_params;
    if (!chat_input.empty() && chat_input.find_first_not_of("-0123456789") == std::string::npos)
      chat_params["chat_id"] = std::stoll(chat_input);
    else
      chat_params["chat_id"] = chat_input;
    auto chat = co_await call(token, "getChat", chat_params, call_timeout);
    if (auto v = chat_verdict(chat); v != verdict::accepted) co_return done.fail(sign_in_refusal(v, chat));
    const auto& c = chat.result.as_object();
    auto chat_id = id_text(c.if_contains("id"));
    auto title = string_at(c, "title");
    if (title.empty()) title = display_name(string_at(c, "first_name"), string_at(c, "last_name"), string_at(c, "username"));
    auto kept = co_await host_call<xconn::sdk::kv_result>([&](auto resume) {
      host_.kv_write(kv_batch().put("chat/" + channel, chat_id), std::move(resume));
    });
    if (!kept.ok) co_return done.fail({"store_failed", "the binding could not be kept", true});
    bind({channel, token, token_key(host_, token), chat_id});
    // A title of 128 CJK characters is 384 bytes: cut to the host's bound, or the sign-in would be refused.
    title = xconn::kit::emit_display_field(title.empty() ? chat_id : title);
    json::object binding{{"display_name", title},
                         {"account_hint", xconn::kit::emit_display_field("@" + username + " / chat " +
                                                                          masked_chat_id(chat_id))}};
    done.ok(json::serialize(json::object{{"status", "authenticated"}, {"binding", std::move(binding)}}));
  }

  // getMe and getChat of a restored channel's token and chat: accepted, refused, or not answered.
  awaitable<verdict> check_binding(const std::string& token, const std::string& chat_id) {
    auto me = co_await call(token, "getMe", no_params(), call_timeout);
    if (auto v = token_verdict(me); v != verdict::accepted) co_return v;
    json::object chat_params;
    chat_params["chat_id"] = std::stoll(chat_id);
    auto chat = co_await call(token, "getChat", chat_params, call_timeout);
    co_return chat_verdict(chat);
  }

  // A restored channel is shown connected only once Telegram took its token and chat again, and revoked only when
  // Telegram refused them. When Telegram does not answer (no answer, 5xx, 429), the channel shows degraded, the
  // plugin target_unreachable, its replies are refused retryable, and the check is asked again with backoff until
  // Telegram answers (adapters' shared rules; the IRC plugin does the same for its server). Before, no answer left
  // the channel offline with nothing polling for good, and a 5xx showed it connected unchecked.
  awaitable<void> restore(std::string channel, std::string token, std::string chat_id, completion done) {
    if (token.empty() || chat_id.empty()) co_return done.ok(xconn::sdk::channel_report("expired"));
    auto v = co_await check_binding(token, chat_id);
    if (refused(v)) co_return done.ok(xconn::sdk::channel_report("revoked"));
    if (v == verdict::accepted) {
      connect(channel, token, chat_id);
      co_return done.ok(xconn::sdk::channel_report("connected"));
    }
    auto run = start_checking(channel, token, chat_id);
    done.ok(xconn::sdk::channel_report("degraded", "target_unreachable"));
    spawn(check_again(channel, run));
  }

  void connect(const std::string& channel, const std::string& token, const std::string& chat_id) {
    bind({channel, token, token_key(host_, token), chat_id});
    // A channel signed in before the keys were HMACs still holds the bare hash: let go of it (docs/telegram.md).
    if (auto legacy = xconn::kit::legacy_consumer_key("bot-", token); legacy != token_key(host_, token))
      host_.release_consumer(channel, legacy);
  }

  // The channel's check is pending (replacing any earlier one); the run that owns it.
  std::uint64_t start_checking(const std::string& channel, const std::string& token, const std::string& chat_id) {
    std::uint64_t run = 0;
    {
      std::lock_guard lock(mutex_);
      run = ++check_runs_;
      unverified_[channel] = {token, chat_id, run};
    }
    health_.set("checks", "target_unreachable");
    return run;
  }
  void stop_checking(const std::string& channel) {
    bool none_left = false;
    {
      std::lock_guard lock(mutex_);
      if (!unverified_.erase(channel)) return;
      none_left = unverified_.empty();
    }
    if (none_left) health_.set("checks", "");
  }
  bool awaiting_check(const std::string& channel) {
    std::lock_guard lock(mutex_);
    return unverified_.contains(channel);
  }

  // Checks a restored channel again after 1 s, 2 s, 4 s, ... at most 60 s apart, until Telegram answers: then it
  // is bound and pushed connected, or pushed revoked. Ends when the channel signs out, is bound anew, or the run
  // is replaced.
  awaitable<void> check_again(std::string channel, std::uint64_t run) {
    xconn::kit::retry_backoff backoff;
    for (;;) {
      co_await pause(backoff.next());
      pending_check pending;
      {
        std::lock_guard lock(mutex_);
        auto it = unverified_.find(channel);
        if (it == unverified_.end() || it->second.run != run) co_return;
        pending = it->second;
      }
      auto v = co_await check_binding(pending.token, pending.chat_id);
      {
        std::lock_guard lock(mutex_);
        auto it = unverified_.find(channel);
        if (it == unverified_.end() || it->second.run != run) co_return;
      }
      if (v == verdict::accepted) {
        connect(channel, pending.token, pending.chat_id);
        host_.set_channel_status(channel, "connected");
        host_.info("telegram: a restored channel was checked once Telegram answered again");
        co_return;
      }
      if (refused(v)) {
        stop_checking(channel);
        host_.set_channel_status(channel, "revoked");
        co_return;
      }
    }
  }

  // sendMessage of one part, waiting out 429s up to the deadline; the reply as Telegram gave it.
  awaitable<api_reply> send_message(const binding& b, const std::string& text,
                                    std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      json::object params;
      params["chat_id"] = std::stoll(b.chat_id);
      params["text"] = text;
      auto r = co_await call(b.token, "sendMessage", params, call_timeout);
      // Past a 429 the next call waits out the token's hold itself.
      if (r.http_status != 429 || std::chrono::steady_clock::now() + std::chrono::seconds(r.retry_after_s) > deadline)
        co_return r;
    }
  }

  // What a failed call becomes for the host, with the channel revoked when Telegram says the bot lost the chat.
  std::string failure_code(const binding& b, const api_reply& r) {
    if (!r.reached()) return "target_unreachable";
    if (r.http_status == 403) {
      host_.set_channel_status(b.channel, "revoked");
      return "telegram_forbidden";
    }
    if (r.http_status == 401) {
      host_.set_channel_status(b.channel, "revoked");
      return "telegram_unauthorized";
    }
    return r.http_status == 429 ? "rate_limited" : "telegram_" + std::to_string(r.http_status);
  }

  awaitable<api_reply> edit_message(const binding& b, const std::string& telegram_id, const std::string& text) {
    json::object params;
    params["chat_id"] = std::stoll(b.chat_id);
    params["message_id"] = std::stoll(telegram_id);
    params["text"] = text;
    auto r = co_await call(b.token, "editMessageText", params, call_timeout);
    // The same text again is not an error worth failing for.
    if (r.http_status == 400 && r.description.find("message is not modified") != std::string::npos) r.ok = true;
    co_return r;
  }

  awaitable<void> chat_action(binding b) {
    json::object params;
    params["chat_id"] = std::stoll(b.chat_id);
    params["action"] = "typing";
    co_await call(b.token, "sendChatAction", params, call_timeout);
  }

  // Brings the Telegram message of (channel, message id) to the newest text, one request at a time; the first text
  // creates it. A chat takes one delta edit a second, whichever live message it is for: an edit reserves its
  // chat's slot before it goes.
  awaitable<void> live_update(binding b, std::string message_id, std::string text) {
    const std::string key = b.channel + "\n" + message_id;
    const std::string chat = b.key + "\n" + b.chat_id;
    {
      std::lock_guard lock(mutex_);
      auto& live = live_[key];
      live.latest = first_part(text);
      if (live.busy) co_return;  // the request on its way takes the newest text when it returns
      live.busy = true;
    }
    for (;;) {
      std::string telegram_id, want;
      std::chrono::steady_clock::time_point next{};
      {
        std::lock_guard lock(mutex_);
        auto it = live_.find(key);
        if (it == live_.end()) co_return;  // the final took over
        if (it->second.latest == it->second.shown) {
          it->second.busy = false;
          co_return;
        }
        telegram_id = it->second.telegram_id;
        want = it->second.latest;
        if (!telegram_id.empty()) {
          auto now = std::chrono::steady_clock::now();
          auto& slot = chat_edit_[chat];
          if (slot + 1s > now) next = slot + 1s;
          else slot = now;  // this edit's turn
        }
      }
      if (next != std::chrono::steady_clock::time_point{}) {
        asio::steady_timer wait(io_, next);
        co_await wait.async_wait(use_awaitable);
        continue;  // newer text may have come meanwhile, or another message took the slot
      }
      // Two statements: GCC 12 miscompiles co_await inside a conditional expression.
      api_reply r;
      if (telegram_id.empty()) r = co_await send_message(b, want, std::chrono::steady_clock::now() + 10s);
      else r = co_await edit_message(b, telegram_id, want);
      std::lock_guard lock(mutex_);
      auto it = live_.find(key);
      if (it == live_.end()) co_return;
      if (!r.ok) {
        it->second.busy = false;  // the final will send or edit the whole text
        co_return;
      }
      if (telegram_id.empty() && r.result.is_object()) {
        it->second.telegram_id = id_text(r.result.as_object().if_contains("message_id"));
        auto now = std::chrono::steady_clock::now();
        if (chat_edit_.size() > 1024) std::erase_if(chat_edit_, [&](const auto& e) { return e.second + 1s < now; });
        chat_edit_[chat] = std::max(chat_edit_[chat], now);  // its first edit a second after it was created
      }
      it->second.shown = want;
    }
  }

  static std::string first_part(const std::string& text) {
    auto parts = split_text(text, max_message_units);
    return parts.empty() ? std::string() : parts.front();
  }

  // The live message of a final, taken over by it: its Telegram id, once no request of it is on its way.
  awaitable<std::string> take_live(const std::string& channel, const std::string& message_id) {
    const std::string key = channel + "\n" + message_id;
    for (int waited = 0; waited < 200; ++waited) {
      {
        std::lock_guard lock(mutex_);
        auto it = live_.find(key);
        if (it == live_.end()) co_return std::string();
        if (!it->second.busy) {
          auto id = it->second.telegram_id;
          live_.erase(it);
          co_return id;
        }
      }
      asio::steady_timer wait(io_, 50ms);
      co_await wait.async_wait(use_awaitable);
    }
    std::lock_guard lock(mutex_);
    auto it = live_.find(key);
    auto id = it == live_.end() ? std::string() : it->second.telegram_id;
    if (it != live_.end()) live_.erase(it);
    co_return id;
  }

  // A send's refusal for the host: retryable only when nothing reached the chat yet and Telegram may take it later.
  std::string send_refused(const binding& b, const api_reply& r, bool part_sent) {
    bool retryable = !part_sent && (!r.reached() || r.http_status == 429 || r.http_status >= 500);
    return json::serialize(json::object{{"ok", false}, {"error", failure_code(b, r)}, {"retryable", retryable}});
  }

  awaitable<void> send_text(binding b, std::string text, std::string message_id, completion done) {
    auto deadline = std::chrono::steady_clock::now() + 25s;
    std::string first_id;
    std::string live_id;
    if (!message_id.empty()) live_id = co_await take_live(b.channel, message_id);
    auto parts = split_text(text, max_message_units);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto& part = parts[i];
      bool edit_live = i == 0 && !live_id.empty();
      if (edit_live) {
        auto edited = co_await edit_message(b, live_id, part);
        if (edited.ok) {
          first_id = live_id;
          continue;
        }
      }
      auto r = co_await send_message(b, part, deadline);
      if (!r.ok) {
        co_return done.ok(send_refused(b, r, !first_id.empty()));
      }
      if (first_id.empty() && r.result.is_object()) first_id = id_text(r.result.as_object().if_contains("message_id"));
    }
    done.ok(json::serialize(json::object{{"ok", true}, {"external_key", b.chat_id + ":" + first_id}}));
  }

  // A file of the channel (the host's store), read whole; nullopt when it is not one of the channel's.
  std::optional<std::string> read_whole(const std::string& channel, const std::string& file_ref) {
    std::string bytes;
    char buffer[64 * 1024];
    for (;;) {
      auto n = host_.read_file(channel, file_ref, bytes.size(), buffer, sizeof buffer);
      if (n < 0) return std::nullopt;
      if (n == 0) return bytes;
      bytes.append(buffer, static_cast<std::size_t>(n));
      if (bytes.size() > max_media_bytes) return std::nullopt;
    }
  }

  // sendPhoto for images, sendVideo for videos, sendDocument for anything else, with an optional caption.
  awaitable<api_reply> send_file(const binding& b, const json::object& item, const std::string& caption,
                                 std::string* media_type) {
    auto bytes = read_whole(b.channel, string_at(item, "file_ref"));
    if (!bytes) {
      api_reply missing;
      missing.http_status = 404;
      missing.description = "no such file on the channel";
      co_return missing;
    }
    // A final's items carry the stored name and type; a tool names only the file_ref: the host tells what it stored
    // (ABI 1.7), and an older host's file is typed and named from its first bytes (file_kind.hpp).
    auto mime = string_at(item, "mime_type");
    auto filename = string_at(item, "filename");
    if (mime.empty() || filename.empty()) {
      if (auto stored = host_.describe_file(b.channel, string_at(item, "file_ref"))) {
        if (mime.empty()) mime = stored->mime_type;
        if (filename.empty()) filename = stored->filename;
      }
    }
    if (mime.empty()) mime = sniff_mime(*bytes);
    if (filename.empty()) filename = name_for(mime);
    bool image = mime.starts_with("image/"), video = mime.starts_with("video/");
    if (media_type) *media_type = image ? "image" : video ? "video" : "file";
    file_part part{image ? "photo" : video ? "video" : "document", filename, mime, std::move(*bytes)};
    json::object fields;
    fields["chat_id"] = b.chat_id;
    if (!caption.empty()) fields["caption"] = caption;
    const std::string method = image ? "sendPhoto" : video ? "sendVideo" : "sendDocument";
    co_return co_await upload(b.token, method, fields, part,
                                    std::chrono::seconds(60));
  }

  // A final with files: the text rides as the first file's caption when it fits (1,024), else goes first.
  awaitable<void> send_files(binding b, std::string text, json::array files, completion done) {
    bool as_caption = utf16_units(text) <= max_caption_units;
    std::string first_id;
    auto fail = [&](const api_reply& r) { done.ok(send_refused(b, r, !first_id.empty())); };
    if (!as_caption) {
      for (const auto& part : split_text(text, max_message_units)) {
        auto r = co_await send_message(b, part, std::chrono::steady_clock::now() + 25s);
        if (!r.ok) co_return fail(r);
        if (first_id.empty() && r.result.is_object()) first_id = id_text(r.result.as_object().if_contains("message_id"));
      }
    }
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (!files[i].is_object()) continue;
      std::string caption;  // a local, not a temporary in the co_await (GCC 12)
      if (i == 0 && as_caption) caption = text;
      auto r = co_await send_file(b, files[i].as_object(), caption, nullptr);
      if (!r.ok) co_return fail(r);
      if (first_id.empty() && r.result.is_object()) first_id = id_text(r.result.as_object().if_contains("message_id"));
    }
    done.ok(json::serialize(json::object{{"ok", true}, {"external_key", b.chat_id + ":" + first_id}}));
  }

  awaitable<void> send_media_tool(binding b, json::object args, completion done) {
    auto ref = string_at(args, "file_ref");
    auto caption = string_at(args, "caption");
    if (caption.empty()) caption = string_at(args, "text");
    if (utf16_units(caption) > max_caption_units)
      co_return done.fail({"message_too_long", "a caption is at most 1,024 characters", false});
    // A tool names only the file_ref: send_file asks the host for its stored name and type.
    json::object item{{"file_ref", ref}};
    std::string media_type;
    auto r = co_await send_file(b, item, caption, &media_type);
    if (r.http_status == 404 && !r.ok && r.description == "no such file on the channel")
      co_return done.fail({"file_ref_not_found", "no uploaded file with that file_ref on this channel", false});
    if (!r.ok || !r.result.is_object())
      co_return done.fail({failure_code(b, r), "Telegram did not take the file", !r.reached()});
    auto* id = r.result.as_object().if_contains("message_id");
    done.ok(json::serialize(json::object{{"status", "sent"},
                                         {"message_id", id ? *id : json::value(nullptr)},
                                         {"file_ref", ref},
                                         {"media_type", media_type}}));
  }

  awaitable<void> send_tool(binding b, std::string text, completion done) {
    if (text.empty()) co_return done.fail({"invalid_argument", "text must not be empty", false});
    // Telegram's own bound, the number the model was told (telegram_manifest.hpp).
    if (utf16_units(text) > max_message_units)
      co_return done.fail({"message_too_long", "at most 4,096 UTF-16 code units (most emoji count as two)", false});
    auto r = co_await send_message(b, text, std::chrono::steady_clock::now() + 25s);
    if (!r.ok || !r.result.is_object())
      co_return done.fail({failure_code(b, r), "Telegram did not take the message", !r.reached()});
    auto* id = r.result.as_object().if_contains("message_id");
    done.ok(json::serialize(json::object{{"status", "sent"}, {"message_id", id ? *id : json::value(nullptr)}}));
  }

  // The channels bound to a chat (updates are routed by chat id).
  std::vector<std::string> channels_of(const std::string& key, const std::string& chat_id) {
    std::vector<std::string> out;
    std::lock_guard lock(mutex_);
    for (const auto& [id, b] : channels_)
      if (b.key == key && b.chat_id == chat_id) out.push_back(id);
    return out;
  }

  // Fetches the message's file from Telegram at once (its links expire); nullopt when it cannot be had.
  awaitable<std::optional<std::string>> fetch_media(const std::string& token, const media& file) {
    json::object params;
    params["file_id"] = file.file_id;
    auto info = co_await call(token, "getFile", params, call_timeout);
    if (!info.ok || !info.result.is_object()) co_return std::nullopt;
    auto path = string_at(info.result.as_object(), "file_path");
    if (path.empty()) co_return std::nullopt;
    std::string bytes;
    auto got = co_await api_->download(token, path, max_media_bytes, std::chrono::seconds(60), &bytes);
    if (!got.ok) co_return std::nullopt;
    co_return bytes;
  }

  // Stores bytes as a file of channel (never waiting for the store); the file_ref, or "" when refused.
  awaitable<std::string> store_file(const std::string& channel, const media& file, std::string bytes) {
    auto stored = co_await host_call<xconn::sdk::file_result>([&](auto resume) {
      host_.put_file_nowait(channel, file.filename, file.mime_type, std::move(bytes), std::move(resume));
    });
    if (!stored.ok) co_return std::string();
    auto item = parse_object(stored.file_json).value_or(json::object{});
    co_return string_at(item, "file_ref");
  }

  awaitable<void> pause(std::chrono::seconds s) {
    asio::steady_timer t(io_, s);
    co_await t.async_wait(use_awaitable);
  }

  awaitable<void> poll(std::shared_ptr<poller> p) {
    const std::string cursor_key = "offset/" + p->key;
    auto kept = host_.kv_get(cursor_key);
    // A build before the HMAC keys kept the offset under the bare hash of the token: carried over, then erased.
    if (auto legacy = "offset/" + xconn::kit::legacy_consumer_key("bot-", p->token); !kept && legacy != cursor_key)
      if ((kept = host_.kv_get(legacy))) host_.kv_write(kv_batch().put(cursor_key, *kept).erase(legacy));
    auto offset = update_offset::from_kept(kept.value_or(""));
    const std::string source = "poller " + p->key;
    auto set_health = [&](bool bad, const char* code) { health_.set(source, bad ? code : ""); };
    while (!p->stopping) {
      json::object params{{"offset", offset.next()}, {"timeout", settings_.poll_timeout_s},
                          {"allowed_updates", json::array{"message", "channel_post"}}};
      auto r = co_await call(p->token, "getUpdates", params, std::chrono::seconds(settings_.poll_timeout_s + 10));
      if (p->stopping) break;
      if (!r.reached() || r.http_status >= 500) {
        set_health(true, "telegram_unreachable");
        co_await pause(2s);
        continue;
      }
      if (r.http_status == 429) continue;  // the next poll waits out the token's hold
      if (r.http_status == 409) {
        set_health(true, "telegram_conflict");
        co_await pause(2s);
        continue;
      }
      if (r.http_status == 401 || r.http_status == 404) {
        std::vector<std::string> lost;
        {
          std::lock_guard lock(mutex_);
          for (const auto& [id, b] : channels_)
            if (b.key == p->key) lost.push_back(id);
        }
        for (const auto& id : lost) host_.set_channel_status(id, "revoked");
        set_health(false, "");
        break;  // the host releases the consumer with the credential
      }
      if (!r.ok || !r.result.is_array()) {
        set_health(true, "telegram_bad_answer");
        co_await pause(2s);
        continue;
      }
      set_health(false, "");
      // The page's messages are emitted together (the host commits them in order, group-committed), the offset
      // riding with the last of them: durable exactly when they all are.
      std::vector<page_emit> emits;
      auto page_next = offset;
      std::optional<long long> page_first;  // the page's first update not handled before
      for (const auto& u : r.result.as_array()) {
        if (!u.is_object()) continue;
        const auto& update = u.as_object();
        auto* id = update.if_contains("update_id");
        if (!id || !id->is_int64()) continue;
        long long first = id->as_int64();
        if (page_next.handled(first)) continue;
        if (!page_first) page_first = first;
        page_next = page_next.after(first);
        const json::value* m = update.if_contains("message");
        if (!m) m = update.if_contains("channel_post");
        auto emit = m && m->is_object() ? emit_of(m->as_object()) : std::nullopt;
        if (!emit) {
          host_.count("updates_unsupported");  // an update kind not asked for (allowed_updates), or no chat named
          continue;
        }
        auto targets = channels_of(p->key, id_text(m->as_object().at("chat").as_object().if_contains("id")));
        if (targets.empty()) continue;
        auto file = media_of(m->as_object());
        std::optional<std::string> bytes;
        if (file) {
          bytes = co_await fetch_media(p->token, *file);
          if (!bytes) host_.log(XCONN_LOG_WARN, "telegram: a message's file could not be fetched; sent without it");
        }
        // A reply's quoted message goes first, as context of the reply (the host places it, docs/protocol.md "Inbound
        // messages", "Outbound messages").
        auto quoted = quoted_context(m->as_object());
        for (const auto& channel : targets) {
          if (quoted) emits.push_back({channel, json::serialize(*quoted), first, true});
          auto message = *emit;
          if (bytes) {
            auto ref = co_await store_file(channel, *file, *bytes);
            if (!ref.empty()) message["files"] = json::array{json::object{{"file_ref", ref}}};
          }
          if (string_at(message, "text").empty() && !message.contains("files"))
            message["text"] = "[a file that could not be fetched]";
          emits.push_back({channel, json::serialize(message), first, false});
        }
      }
      if (!page_first) {
        // Only repeats (the saturated INT64_MAX, which no offset confirms): not a busy loop of polls answered at once.
        if (!r.result.as_array().empty()) co_await pause(1s);
        continue;
      }
      auto failed = co_await emit_page(std::move(emits), cursor_key, page_next.kept(), *page_first);
      if (failed) {
        // Telegram keeps what the next poll has not confirmed: ask again from the first message not stored.
        auto rewound = update_offset::rewound_to(*failed);
        co_await host_call<xconn::sdk::kv_result>([&](auto resume) {
          host_.kv_write(kv_batch().put(cursor_key, rewound.kept()), std::move(resume));
        });
        offset = rewound;
        co_await pause(1s);
        continue;
      }
      offset = page_next;
    }
    set_health(false, "");  // a stopped poller's trouble is no one's any more
  }

  struct page_emit {
    std::string channel;
    std::string text;
    long long update_id;
    bool context;  // a quoted message: its loss is logged, not retried
  };

  // Emits a page's messages without waiting between them, the cursor (next) with the last; waits for them all. The
  // update id to ask again from (the first message not stored, first when the cursor alone was not), or nullopt.
  awaitable<std::optional<long long>> emit_page(std::vector<page_emit> emits, std::string cursor_key, std::string next,
                                                long long first) {
    auto cursor = kv_batch().put(cursor_key, next);
    if (emits.empty()) co_return (co_await keep(cursor)) ? std::nullopt : std::optional(first);
    using results = std::vector<xconn::sdk::emit_result>;
    auto all = co_await host_call<results>([&](auto resume) {
      struct gather {
        results got;
        std::atomic<std::size_t> left{0};
        std::function<void(results)> done;
      };
      auto g = std::make_shared<gather>();
      g->got.resize(emits.size());
      g->left = emits.size();
      g->done = std::move(resume);
      for (std::size_t i = 0; i < emits.size(); ++i) {
        auto each = [g, i](xconn::sdk::emit_result r) {
          g->got[i] = std::move(r);
          if (--g->left == 0) g->done(std::move(g->got));
        };
        if (i + 1 == emits.size()) host_.emit_with(emits[i].channel, emits[i].text, cursor, each);
        else host_.emit(emits[i].channel, emits[i].text, each);
      }
    });
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].ok) continue;
      const auto& code = all[i].failure.code;
      if (xconn::kit::emit_refused_for_good(code)) {
        // Asking for it again would bring the same refusal every second, forever: it is skipped, and the host's
        // `error` event has recorded it. The host's reason names the field, never the text.
        if (code == "invalid_message") {
          host_.count("updates_refused");
          host_.log(XCONN_LOG_WARN, "telegram: update " + std::to_string(emits[i].update_id) +
                                        " was refused by the host and is skipped (" + all[i].failure.message + ")");
        }
        continue;
      }
      if (emits[i].context) {
        host_.log(XCONN_LOG_WARN, "telegram: a quoted message was not kept as context");
        continue;
      }
      host_.log(XCONN_LOG_WARN, "telegram: update " + std::to_string(emits[i].update_id) + " was not stored (" + code +
                                    "); asked for again");
      co_return emits[i].update_id;
    }
    // The cursor rode with the last emit: refused with it, it is kept on its own.
    if (!all.back().ok && !(co_await keep(cursor))) co_return emits.back().update_id;
    co_return std::nullopt;
  }

  awaitable<bool> keep(kv_batch batch) {
    auto kept = co_await host_call<xconn::sdk::kv_result>([&](auto resume) { host_.kv_write(batch, std::move(resume)); });
    co_return kept.ok;
  }

  xconn::sdk::host host_;
  settings settings_;
  // Before io_: the coroutines io_ still holds at destruction are destroyed while the client they use exists.
  std::unique_ptr<bot_api> api_;
  event_loop io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{io_.get_executor()};
  std::thread runner_;
  std::mutex mutex_;
  std::map<std::string, binding> channels_;                  // signed-in channels of this run, by channel id
  std::map<std::string, std::shared_ptr<poller>> pollers_;   // by token key
  std::map<std::string, live_message> live_;  // by channel "\n" message id
  std::map<std::string, std::chrono::steady_clock::time_point> chat_edit_;   // by token key "\n" chat id: the last
                                                                             // delta edit (or creation), pruned
  std::map<std::string, std::chrono::steady_clock::time_point> hold_until_;  // by token key: after a 429
  std::map<std::string, pending_check> unverified_;  // restored channels Telegram has not answered for, by channel
  std::uint64_t check_runs_ = 0;
  health_board health_;
  std::uint64_t held_by_429_ = 0;
};

}  // namespace
}  // namespace telegram

XCONN_PLUGIN(telegram::telegram_plugin)
