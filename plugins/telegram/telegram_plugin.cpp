// The telegram plugin's hooks, sign-in and restore (docs/adapters.md "telegram"): a bot bound to a chat per channel,
// one getUpdates long poll per bot token shared by its channels (a host shared consumer), the update offset
// committed with the messages it produced (emit_with), the token sealed by the host and handed back at restore.
// Every Bot API call runs on the adapter's own event loop (one thread), never on a host thread.
#include "telegram_plugin.hpp"

#include "telegram_json.hpp"
#include "telegram_manifest.hpp"
#include "telegram_text.hpp"
#include "telegram_verdict.hpp"
#include "kit/consumer_key.hpp"

#include <xconn/adapter/answers.hpp>

// Boost.JSON compiled into this library (header-only mode, hidden); exactly one translation unit includes it.
#include <boost/json/src.hpp>

namespace telegram {

namespace json = boost::json;
namespace answers = xconn::adapter;
using xconn::adapter::check_verdict;
using xconn::sdk::kv_batch;

std::string telegram_plugin::manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }

std::string telegram_plugin::validate_config(std::string_view section_json) {
  return config_rows.check_text(section_json, nullptr);
}

telegram_plugin::telegram_plugin(xconn::sdk::host host, std::string_view section_json)
    : network_adapter(host, "telegram"),
      health_(host),
      checks_(*this, health_, [this](const std::string& channel) { return verify(channel); },
              [this](const std::string& channel) {
                if (auto kept = binding_of(channel, restored_)) connect(channel, kept->token, kept->chat_id);
              }) {
  config_rows.check_text(section_json, &settings_);  // validate_config has passed it
  auto endpoint = api_endpoint::parse(settings_.api_base_url);
  std::string error;
  auto proxy = settings_.proxy.empty() ? std::nullopt : proxy_url::parse(settings_.proxy);
  api_ = std::make_unique<bot_api>(io(), *endpoint, settings_.ca_file, &error, proxy,
                                   [this](const std::string& name, std::uint64_t n) { this->host().count(name, n); });
  if (!error.empty()) host.log(XCONN_LOG_WARN, error);
}

void telegram_plugin::on_halting() {
  for (auto& p : pollers_.take_all()) p->stop();
}

// ---- Hooks ----

void telegram_plugin::auth_start(std::string_view channel, std::string_view flow_id, std::string_view,
                                 std::string_view input_json, completion done) {
  if (flow_id != "telegram_bot_binding") return done.fail(answers::no_such_auth_flow());
  auto input = parse_object(input_json).value_or(json::object{});
  spawn(sign_in(std::string(channel), string_at(input, "bot_token"), string_at(input, "chat_id"), std::move(done)));
}

void telegram_plugin::channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                                      completion done) {
  auto credentials = parse_object(credentials_json).value_or(json::object{});
  std::string id(channel), token = string_at(credentials, "bot_token");
  auto chat = kv_get("chat/" + id).value_or("");
  {
    std::lock_guard lock(mutex_);
    restored_[id] = {id, token, token.empty() ? std::string() : token_key(token), chat};
  }
  spawn([](telegram_plugin& self, std::string id, completion done) -> awaitable<void> {
    done.ok(co_await self.checks_.restore(id));
  }(*this, std::move(id), std::move(done)));
}

void telegram_plugin::auth_logout(std::string_view channel, completion done) {
  forget(std::string(channel));
  done.ok();
}

void telegram_plugin::channel_end(std::string_view channel, std::string_view reason, completion done) {
  if (reason != "closed") forget(std::string(channel));
  done.ok();
}

void telegram_plugin::consumer_stop(std::string_view key, completion done) {
  if (auto p = pollers_.take(std::string(key))) p->stop();
  done.ok();
}

void telegram_plugin::send(std::string_view channel, std::string_view reply_json, completion done) {
  auto reply = parse_object(reply_json).value_or(json::object{});
  auto b = binding_of(std::string(channel), channels_);
  if (!b && checks_.awaiting(std::string(channel))) return done.ok(answers::send_target_unreachable());
  if (!b) return done.ok(answers::send_not_signed_in());
  if (auto* files = reply.if_contains("files"); files && files->is_array() && !files->as_array().empty())
    return spawn(send_files(*b, string_at(reply, "text"), files->as_array(), std::move(done)));
  spawn(send_text(*b, string_at(reply, "text"), string_at(reply, "idempotency_key"), std::move(done)));
}

// A delta: the first creates the Telegram message, later ones edit it, with at most one delta edit a second in a
// chat (the latest text wins); the final edits it to the whole text (send).
void telegram_plugin::update(std::string_view channel, std::string_view message_id, std::string_view text_so_far,
                             completion done) {
  if (auto b = binding_of(std::string(channel), channels_))
    spawn(live_update(*b, std::string(message_id), std::string(text_so_far)));
  done.ok();
}

void telegram_plugin::activity(std::string_view channel, std::string_view status, std::string_view,
                               completion done) {
  auto b = binding_of(std::string(channel), channels_);
  if (b && status != "idle") spawn(chat_action(*b));
  done.ok();
}

void telegram_plugin::invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                                  std::string_view, completion done) {
  auto b = binding_of(std::string(channel), channels_);
  if (!b && checks_.awaiting(std::string(channel)))
    return done.fail(answers::target_unreachable("Telegram has not answered since the restart; it is asked again"));
  if (!b) return done.fail(answers::not_signed_in());
  auto args = parse_object(arguments_json).value_or(json::object{});
  if (tool_id == "telegram_message_send") return spawn(send_tool(*b, string_at(args, "text"), std::move(done)));
  if (tool_id == "telegram_message_send_media") return spawn(send_media_tool(*b, args, std::move(done)));
  done.fail(answers::no_such_tool());
}

// ---- Bindings ----

// The shared consumer of a bot token: the host's HMAC of it (kit/consumer_key.hpp), so the key names no secret.
std::string telegram_plugin::token_key(std::string_view token) const {
  return xconn::kit::consumer_key(host(), "bot-", token);
}

std::optional<telegram_plugin::binding> telegram_plugin::binding_of(const std::string& channel,
                                                                    const std::map<std::string, binding>& in) {
  std::lock_guard lock(mutex_);
  auto it = in.find(channel);
  return it == in.end() ? std::nullopt : std::optional(it->second);
}

void telegram_plugin::forget(const std::string& channel) {
  {
    std::lock_guard lock(mutex_);
    channels_.erase(channel);
    restored_.erase(channel);
  }
  checks_.forget(channel);
  host().kv_write(kv_batch().erase("chat/" + channel));
}

// The channel is bound: remembered, and its bot's poller held (started by the first channel).
void telegram_plugin::bind(binding b) {
  checks_.forget(b.channel);
  if (host().acquire_consumer(b.channel, b.key) < 0) host().warn("telegram: a consumer was refused");
  {
    std::lock_guard lock(mutex_);
    channels_[b.channel] = b;
    restored_.erase(b.channel);
  }
  auto held = pollers_.acquire(b.key, b.channel, [&] {
    auto p = std::make_shared<poller>(*this, health_,
                                      xconn::adapter::poll_options{"poller " + b.key, "offset/" + b.key,
                                                                   "updates_refused", std::chrono::seconds(2)});
    p->token = b.token;
    p->key = b.key;
    return p;
  });
  if (held.created) spawn(poll(held.consumer));
}

void telegram_plugin::connect(const std::string& channel, const std::string& token, const std::string& chat_id) {
  bind({channel, token, token_key(token), chat_id});
  // A channel signed in before the keys were HMACs still holds the bare hash: let go of it (docs/telegram.md).
  if (auto legacy = xconn::kit::legacy_consumer_key("bot-", token); legacy != token_key(token))
    host().release_consumer(channel, legacy);
}

// ---- Sign-in and restore ----

auto telegram_plugin::sign_in(std::string channel, std::string token, std::string chat_input, completion done)
    -> awaitable<void> {
  auto me = co_await api_->call(token, "getMe", no_params(), call_timeout);
  if (auto v = token_verdict(me); v != verdict::accepted) co_return done.fail(sign_in_refusal(v, me));
  const auto& bot = me.result.as_object();
  auto bot_id = id_text(bot.if_contains("id"));
  auto username = string_at(bot, "username");
  if (chat_input == bot_id) co_return done.fail({"invalid_chat", "the chat id is the bot's own id", false});
  auto params = chat_params(chat_input);  // built beforehand: no braced value inside a co_await (GCC 12)
  auto chat = co_await api_->call(token, "getChat", params, call_timeout);
  if (auto v = chat_verdict(chat); v != verdict::accepted) co_return done.fail(sign_in_refusal(v, chat));
  const auto& c = chat.result.as_object();
  auto chat_id = id_text(c.if_contains("id"));
  auto title = string_at(c, "title");
  if (title.empty()) title = display_name(string_at(c, "first_name"), string_at(c, "last_name"), string_at(c, "username"));
  auto kept = co_await kv_write(kv_batch().put("chat/" + channel, chat_id));
  if (!kept.ok) co_return done.fail(answers::binding_not_kept());
  bind({channel, token, token_key(token), chat_id});
  // A title of 128 CJK characters is 384 bytes: cut to the host's bound, or the sign-in would be refused.
  done.ok(answers::auth_authenticated(
      {xconn::kit::emit_display_field(title.empty() ? chat_id : title),
       xconn::kit::emit_display_field("@" + username + " / chat " + masked_chat_id(chat_id))}));
}

// getMe and getChat of a restored channel's token and chat (channel_checks): shown connected only once Telegram
// took them again, revoked only when Telegram refused them; no answer, a 5xx or a 429 is asked again with backoff.
auto telegram_plugin::verify(const std::string& channel) -> awaitable<check_verdict> {
  auto kept = binding_of(channel, restored_);
  if (!kept || kept->token.empty() || kept->chat_id.empty()) co_return check_verdict::expired;
  auto me = co_await api_->call(kept->token, "getMe", no_params(), call_timeout);
  auto v = token_verdict(me);
  if (v == verdict::accepted) {
    auto params = chat_params(kept->chat_id);
    auto chat = co_await api_->call(kept->token, "getChat", params, call_timeout);
    v = chat_verdict(chat);
  }
  if (v == verdict::accepted) co_return check_verdict::accepted;
  co_return refused(v) ? check_verdict::refused : check_verdict::unreachable;
}

}  // namespace telegram

XCONN_PLUGIN(telegram::telegram_plugin)
