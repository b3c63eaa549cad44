// The wechat plugin's long poll, one per bot on the layer's poll_loop: getupdates from the kept get_updates_buf,
// each batch's messages emitted together with the new cursor riding on the last of them, so a crash can neither lose
// nor repeat one (a batch asked for again is deduplicated by msg_id). Each message's media are fetched from the CDN
// and decrypted into the host's file store before it is emitted; a quoted message goes first as context; the
// sender's latest context_token is kept before the message is, so a reply can always name it.
#include "wechat_plugin.hpp"

#include "kit/json_fields.hpp"

#include <xconn/adapter/media_files.hpp>

namespace wechat {

namespace json = boost::json;
using xconn::sdk::kv_batch;
using namespace std::chrono_literals;

namespace {
constexpr int media_tries = 3;  // within about 30 s: 10 s apart at most
}  // namespace

auto wechat_plugin::poll(std::shared_ptr<poller> p) -> awaitable<void> {
  auto kept = kv_get("cursor/" + p->bot.key);
  // A named function, not a lambda in the co_await (GCC 12, docs/plugin-api.md "One compiler trap").
  poller::poll_fn next_page = [this, p](const update_cursor& cursor) { return poll_page(p, cursor); };
  update_cursor from{kept.value_or("")};  // a named local, not a braced temporary in the co_await (GCC 12)
  co_await p->run(from, std::move(next_page));
}

// A message's media, fetched and decrypted; nullopt after the last try.
auto wechat_plugin::fetch_media(const media_item& media) -> awaitable<std::optional<std::string>> {
  std::string why;
  for (int attempt = 1;; ++attempt) {
    auto bytes = co_await api_->download(media, max_media_bytes, &why);
    if (bytes) co_return bytes;
    host().count("media_" + why);
    if (why != "download_failed" || attempt == media_tries) co_return std::nullopt;  // a wrong key stays wrong
    co_await pause(std::chrono::seconds(attempt * 5));
  }
}

auto wechat_plugin::poll_page(std::shared_ptr<poller> p, update_cursor cursor) -> awaitable<poller::page> {
  const binding bot = p->bot;  // a copy: a new sign-in may replace it while this poll waits
  json::object body{{"get_updates_buf", cursor.buf}};
  auto r = co_await api_->bot_call(bot.baseurl, bot.token, "getupdates", body, p->hold + 10s);
  if (r.session_over()) {
    expire(bot);
    co_return poller::stop_polling();
  }
  if (r.unreachable()) co_return poller::outage("wechat_unreachable");
  if (!r.ok()) {
    host().warn("wechat: getupdates refused (ret " + std::to_string(r.ret) + ")");
    co_return poller::outage("wechat_refused");
  }
  host().count("polls");
  if (auto* hold = r.body.if_contains("longpolling_timeout_ms"); hold && hold->is_int64() && hold->as_int64() > 0)
    p->hold = std::chrono::milliseconds(std::min<std::int64_t>(hold->as_int64(), 120000));
  poller::page page;
  auto next = xconn::kit::string_at(r.body, "get_updates_buf");
  if (!next.empty() && next != cursor.buf) page.next = update_cursor{next};
  auto* msgs = r.body.if_contains("msgs");
  if (!msgs || !msgs->is_array() || !channels_.contains(bot.channel)) co_return page;
  kv_batch senders;  // each sender's latest context_token, and who wrote last on the channel
  for (const auto& m : msgs->as_array()) {
    auto in = m.is_object() ? inbound_of(m.as_object(), bot.bot_id) : std::nullopt;
    if (!in) continue;
    host().count("messages");
    const std::string label = "message " + xconn::kit::string_at(in->emit, "msg_id");
    if (in->quoted) page.messages.push_back({bot.channel, json::serialize(*in->quoted), cursor, label, true});
    json::array files;
    std::string missing;
    for (const auto& media : in->media) {
      auto bytes = co_await fetch_media(media);
      xconn::sdk::file_result stored;
      if (bytes) stored = co_await put_file(bot.channel, media.filename, media.mime_type, std::move(*bytes));
      auto ref = xconn::adapter::stored_file_ref(stored);
      if (ref.empty()) missing += (missing.empty() ? "" : ", ") + media.filename;
      else files.push_back(json::object{{"file_ref", ref}});
    }
    auto emit = std::move(in->emit);
    if (!files.empty()) emit["files"] = std::move(files);
    // Never silently without it: the agent learns which file did not come.
    if (!missing.empty()) emit["text"] = xconn::kit::string_at(emit, "text") + "\n[a file could not be fetched: " + missing + "]";
    page.messages.push_back({bot.channel, json::serialize(emit), cursor, label, false});
    if (!in->context_token.empty()) senders.put("ctx/" + bot.key + "/" + in->from_user, in->context_token);
    senders.put("last/" + bot.channel, in->from_user);
  }
  if (!page.messages.empty()) co_await kv_write(std::move(senders));
  co_return page;
}

}  // namespace wechat
