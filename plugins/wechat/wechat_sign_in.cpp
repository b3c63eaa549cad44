// The wechat plugin's QR sign-in (docs/wechat.md "Signing in"): auth.start fetches a code from iLink and answers
// pending with it; each auth.status asks iLink once how the code stands. A scan turns the run scanned (a redirect
// moves later polls to the data centre WeChat names); an expired code is replaced in the same answer up to three
// times; a confirmation binds the bot to the channel and hands its token to the host to seal. A poll WeChat does not
// answer leaves the run as it was.
#include "wechat_plugin.hpp"

#include "kit/json_fields.hpp"
#include "kit/unix_time.hpp"

#include <xconn/adapter/answers.hpp>

#include <algorithm>

namespace wechat {

namespace json = boost::json;
namespace answers = xconn::adapter;
using xconn::kit::string_at;
using xconn::sdk::kv_batch;

namespace {

constexpr std::int64_t qr_lifetime_ms = 5 * 60 * 1000;  // the run's own bound: WeChat names none
constexpr std::int64_t poll_interval_ms = 2000;
constexpr int max_refreshes = 3;

// A bot account id as shown: the first four and last four characters, the rest hidden.
std::string masked(const std::string& id) {
  return id.size() <= 8 ? id + "***" : id.substr(0, 4) + "***" + id.substr(id.size() - 4);
}

}  // namespace

std::string wechat_plugin::pending_answer(const qr_run& run, std::string_view status) const {
  return answers::auth_qr(status, run.qr_text, run.expires_at, poll_interval_ms);
}

// A new code for the run from iLink, naming the tokens this plugin holds (at most 10, sorted) as iLink asks; the
// code's text, or nullopt when iLink gave none.
auto wechat_plugin::new_code(qr_run& run) -> awaitable<std::optional<std::string>> {
  std::vector<std::string> tokens;
  for (const auto& [id, b] : channels_) tokens.push_back(b.token);
  std::sort(tokens.begin(), tokens.end());
  tokens.resize(std::min<std::size_t>(tokens.size(), 10));
  json::array local(tokens.begin(), tokens.end());
  auto r = co_await api_->get_qrcode(local);
  auto qrcode = string_at(r.body, "qrcode"), text = string_at(r.body, "qrcode_img_content");
  if (!r.ok() || qrcode.empty() || text.empty()) co_return std::nullopt;
  run.qrcode = qrcode;
  run.qr_text = text;
  run.poll_at = api_->api();
  run.scanned = false;
  run.expires_at = xconn::kit::unix_ms() + qr_lifetime_ms;
  co_return text;
}

auto wechat_plugin::start_qr(std::string channel, std::string session, completion done) -> awaitable<void> {
  // One run per channel; an abandoned run is dropped once its code is long past (the host keeps its own record).
  const auto now = xconn::kit::unix_ms();
  std::erase_if(qr_runs_, [&](const auto& r) {
    return r.second.channel == channel || r.second.expires_at + qr_lifetime_ms < now;
  });
  qr_run run;
  run.channel = channel;
  if (!co_await new_code(run))
    co_return done.fail(answers::target_unreachable("WeChat did not give a QR code; try again"));
  auto answer = pending_answer(run, "pending");
  qr_runs_[session] = std::move(run);
  done.ok(answer);
}

auto wechat_plugin::poll_qr(std::string channel, std::string session, bool refresh, completion done)
    -> awaitable<void> {
  auto it = qr_runs_.find(session);
  if (it == qr_runs_.end() || it->second.channel != channel)
    co_return done.fail({"auth_session_not_found", "no such QR sign-in on this channel", false});
  if (!refresh && xconn::kit::unix_ms() > it->second.expires_at) {  // five minutes without a confirmation
    qr_runs_.erase(it);
    co_return done.ok(answers::auth_state("expired", "the QR code expired; start again"));
  }
  if (refresh) {
    it->second.refreshes = 0;
    if (!co_await new_code(it->second))
      co_return done.fail(answers::target_unreachable("WeChat did not give a QR code; try again"));
    co_return done.ok(pending_answer(it->second, "pending"));
  }
  auto r = co_await api_->qrcode_status(it->second.poll_at, it->second.qrcode);
  it = qr_runs_.find(session);  // the run may have been canceled meanwhile
  if (it == qr_runs_.end()) co_return done.ok(answers::auth_state("unauthenticated"));
  auto& run = it->second;
  auto as_it_was = [&] { return pending_answer(run, run.scanned ? "scanned" : "pending"); };
  if (!r.ok()) co_return done.ok(as_it_was());  // no answer, a 5xx: the run stays as it was
  auto status = string_at(r.body, "status");
  if (status == "scaned" || status == "scaned_but_redirect") {
    run.scanned = true;
    if (auto to = api_->redirected(string_at(r.body, "redirect_host")); to && status == "scaned_but_redirect")
      run.poll_at = *to;
    co_return done.ok(pending_answer(run, "scanned"));
  }
  if (status == "expired") {
    if (run.refreshes >= max_refreshes) {
      qr_runs_.erase(it);
      co_return done.ok(answers::auth_state("expired", "the QR code expired three times; start again"));
    }
    ++run.refreshes;
    if (!co_await new_code(run)) co_return done.ok(as_it_was());
    co_return done.ok(pending_answer(run, "pending"));
  }
  if (status == "confirmed") co_return co_await confirmed(session, std::move(r.body), std::move(done));
  if (status == "need_verifycode" || status == "verify_code_blocked" || status == "binded_redirect") {
    qr_runs_.erase(it);
    co_return done.ok(answers::auth_failed(status == "binded_redirect"
                                               ? "this WeChat account is bound elsewhere already"
                                               : "WeChat asks for a verification code, which this sign-in cannot take"));
  }
  done.ok(pending_answer(run, "pending"));  // wait, or a status this build does not know
}

// The scan was confirmed: the bot is kept (its ids in the store, its token sealed by the host) and bound.
auto wechat_plugin::confirmed(std::string session, json::object answer, completion done) -> awaitable<void> {
  auto channel = qr_runs_.at(session).channel;
  qr_runs_.erase(session);
  binding b{channel, string_at(answer, "bot_token"), string_at(answer, "ilink_bot_id"),
            string_at(answer, "ilink_user_id"), string_at(answer, "baseurl"), ""};
  if (b.token.empty() || b.bot_id.empty()) co_return done.ok(answers::auth_failed("WeChat confirmed without a bot"));
  if (host().c_api()->api_minor < 8)
    co_return done.ok(answers::auth_failed("this connector server cannot keep a QR sign-in's token (plugin ABI 1.8)"));
  b.key = bot_key(b.bot_id);
  json::object kept{{"bot_id", b.bot_id}, {"user_id", b.user_id}, {"baseurl", b.baseurl}};
  auto written = co_await kv_write(kv_batch().put("bot/" + channel, json::serialize(kept)));
  if (!written.ok) co_return done.fail(answers::binding_not_kept());
  bind(b);
  done.ok(answers::auth_authenticated({"WeChat " + masked(b.bot_id), masked(b.bot_id)},
                                      json::object{{"bot_token", b.token}}));
}

}  // namespace wechat
