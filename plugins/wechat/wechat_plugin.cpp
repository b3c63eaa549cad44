// The wechat plugin's hooks, bindings and restore (docs/wechat.md). Every hook hands its work to the adapter's loop,
// where the maps live: no lock, no host thread ever touching them.
#include "wechat_plugin.hpp"

#include "wechat_manifest.hpp"
#include "kit/consumer_key.hpp"
#include "kit/json_fields.hpp"

#include <xconn/adapter/answers.hpp>

// Boost.JSON compiled into this library (header-only mode, hidden); exactly one translation unit includes it.
#include <boost/json/src.hpp>

namespace wechat {

namespace json = boost::json;
namespace answers = xconn::adapter;
using xconn::adapter::check_verdict;
using xconn::kit::string_at;
using xconn::sdk::kv_batch;

namespace {
json::object object_of(std::string_view text) { return xconn::kit::parse_object(text).value_or(json::object{}); }
}  // namespace

std::string wechat_plugin::manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }

std::string wechat_plugin::validate_config(std::string_view section_json) {
  return config_rows.check_text(section_json, nullptr);
}

wechat_plugin::wechat_plugin(xconn::sdk::host host, std::string_view section_json)
    : network_adapter(host, "wechat"),
      pollers_(host),
      health_(host),
      checks_(*this, health_, [this](const std::string& channel) { return verify(channel); },
              [this](const std::string& channel) {
                if (auto it = restored_.find(channel); it != restored_.end()) bind(it->second);
              }) {
  config_rows.check_text(section_json, &settings_);  // validate_config has passed it
  xconn::adapter::http_client::options options;
  options.ca_file = settings_.ca_file;
  if (!settings_.proxy.empty()) options.proxy = xconn::adapter::proxy_url::parse(settings_.proxy);
  std::string error;
  api_ = std::make_unique<ilink_api>(io(), *endpoint::parse(settings_.api_base_url),
                                     *endpoint::parse(settings_.cdn_base_url), std::move(options),
                                     XCONN_PLUGIN_BUILD_VERSION, &error);
  if (!error.empty()) host.log(XCONN_LOG_WARN, error);
}

void wechat_plugin::on_halting() {
  for (auto& p : pollers_.take_all()) p->stop();
}

// ---- Hooks: each goes to the loop ----

void wechat_plugin::auth_start(std::string_view channel, std::string_view flow_id, std::string_view session,
                               std::string_view, completion done) {
  if (flow_id != "wechat_qr_login") return done.fail(answers::no_such_auth_flow());
  spawn(start_qr(std::string(channel), std::string(session), std::move(done)));
}

void wechat_plugin::auth_status(std::string_view channel, std::string_view, std::string_view session, bool refresh,
                                completion done) {
  spawn(poll_qr(std::string(channel), std::string(session), refresh, std::move(done)));
}

void wechat_plugin::auth_cancel(std::string_view, std::string_view, std::string_view session, completion done) {
  spawn([](wechat_plugin& self, std::string session, completion done) -> awaitable<void> {
    self.qr_runs_.erase(session);
    done.ok();
    co_return;
  }(*this, std::string(session), std::move(done)));
}

void wechat_plugin::auth_logout(std::string_view channel, completion done) {
  spawn(sign_out(std::string(channel)));
  done.ok();
}

void wechat_plugin::channel_end(std::string_view channel, std::string_view reason, completion done) {
  if (reason != "closed") spawn(sign_out(std::string(channel)));  // closed: the channel stays signed in
  done.ok();
}

void wechat_plugin::consumer_stop(std::string_view key, completion done) {
  spawn([](wechat_plugin& self, std::string key) -> awaitable<void> {
    if (auto p = self.pollers_.take(key)) p->stop();
    co_return;
  }(*this, std::string(key)));
  done.ok();
}

void wechat_plugin::channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                                    completion done) {
  spawn(restore(std::string(channel), string_at(object_of(credentials_json), "bot_token"), std::move(done)));
}

void wechat_plugin::send(std::string_view channel, std::string_view reply_json, completion done) {
  spawn([](wechat_plugin& self, std::string channel, json::object reply, completion done) -> awaitable<void> {
    if (auto* b = self.bound(channel)) co_return co_await self.deliver(*b, std::move(reply), std::move(done));
    if (self.checks_.awaiting(channel)) co_return done.ok(answers::send_target_unreachable());
    done.ok(answers::send_not_signed_in());
  }(*this, std::string(channel), object_of(reply_json), std::move(done)));
}

void wechat_plugin::activity(std::string_view channel, std::string_view status, std::string_view, completion done) {
  spawn([](wechat_plugin& self, std::string channel, bool on) -> awaitable<void> {
    if (auto* b = self.bound(channel)) co_await self.typing(*b, on);
  }(*this, std::string(channel), status != "idle"));
  done.ok();
}

void wechat_plugin::invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                                std::string_view, completion done) {
  spawn([](wechat_plugin& self, std::string channel, std::string tool, json::object args,
           completion done) -> awaitable<void> {
    auto* b = self.bound(channel);
    if (!b && self.checks_.awaiting(channel))
      co_return done.fail(answers::target_unreachable("WeChat has not answered since the restart; it is asked again"));
    if (!b) co_return done.fail(answers::not_signed_in());
    if (tool == "wechat_message_send") co_return co_await self.message_tool(*b, string_at(args, "text"), std::move(done));
    if (tool == "wechat_message_send_media")
      co_return co_await self.media_tool(*b, string_at(args, "file_ref"), string_at(args, "text"), std::move(done));
    done.fail(answers::no_such_tool());
  }(*this, std::string(channel), std::string(tool_id), object_of(arguments_json), std::move(done)));
}

// ---- Bindings ----

// A bot's shared consumer: the host's HMAC of its account id, so the key names no account.
std::string wechat_plugin::bot_key(const std::string& bot_id) const {
  return xconn::kit::consumer_key(host(), "wechat-", bot_id);
}

wechat_plugin::binding* wechat_plugin::bound(const std::string& channel) {
  auto it = channels_.find(channel);
  return it == channels_.end() ? nullptr : &it->second;
}

// The channel is bound: its bot's poller held (started by the first holder), and every other channel of that bot
// revoked: one bot, one channel.
void wechat_plugin::bind(binding b) {
  checks_.forget(b.channel);
  restored_.erase(b.channel);
  std::vector<std::string> others;
  for (const auto& [id, other] : channels_)
    if (other.bot_id == b.bot_id && id != b.channel) others.push_back(id);
  for (const auto& id : others) {
    set_channel_status(id, "revoked");
    spawn(sign_out(id));
  }
  channels_[b.channel] = b;
  auto held = pollers_.acquire(b.key, b.channel, [&] {
    auto p = std::make_shared<poller>(*this, health_,
                                      xconn::adapter::poll_options{"poller " + b.key, "cursor/" + b.key,
                                                                   "messages_refused", std::chrono::seconds(30)});
    p->bot = b;
    return p;
  });
  if (held.created) spawn(poll(held.consumer));
  else held.consumer->bot = b;  // a new sign-in of the same bot: its new token
}

// WeChat ended the bot's session (-14): the channel turns expired, its poll stops; a new scan signs it in again.
void wechat_plugin::expire(const binding& b) {
  if (!channels_.contains(b.channel)) return;
  set_channel_status(b.channel, "expired");
  spawn(sign_out(b.channel));
}

// Signed out, ended, expired or revoked: the channel forgets its bot and lets go of its poller (the last holder
// stops it).
auto wechat_plugin::sign_out(std::string channel) -> awaitable<void> {
  checks_.forget(channel);
  restored_.erase(channel);
  channels_.erase(channel);
  if (auto last = pollers_.release(channel)) last->stop();
  co_await kv_write(kv_batch().erase("bot/" + channel).erase("last/" + channel));
}

// ---- Restore ----

auto wechat_plugin::restore(std::string channel, std::string token, completion done) -> awaitable<void> {
  auto kept = object_of(kv_get("bot/" + channel).value_or(""));
  binding b{channel, token, string_at(kept, "bot_id"), string_at(kept, "user_id"), string_at(kept, "baseurl"), ""};
  if (b.token.empty() || b.bot_id.empty()) co_return done.ok(answers::report_expired());
  b.key = bot_key(b.bot_id);
  restored_[channel] = b;
  done.ok(co_await checks_.restore(channel));
}

// getconfig with the restored token: WeChat took it (connected), ended the session (-14: expired), or did not
// answer (degraded, asked again with backoff).
auto wechat_plugin::verify(const std::string& channel) -> awaitable<check_verdict> {
  auto it = restored_.find(channel);
  if (it == restored_.end()) co_return check_verdict::expired;
  auto b = it->second;
  json::object body{{"ilink_user_id", b.user_id}};
  auto r = co_await api_->bot_call(b.baseurl, b.token, "getconfig", body, std::chrono::seconds(10));
  if (r.ok()) co_return check_verdict::accepted;
  if (r.session_over()) co_return check_verdict::expired;
  co_return check_verdict::unreachable;
}

}  // namespace wechat

XCONN_PLUGIN(wechat::wechat_plugin)
