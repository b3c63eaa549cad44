// The telegram plugin's long poll, one per bot token shared by its channels, on the layer's poll_loop: getUpdates
// from the kept offset, each page's messages emitted together with the offset riding on the last of them, a
// message's file fetched at once, a quoted message sent first as context.
#include "telegram_plugin.hpp"

#include "telegram_json.hpp"
#include "kit/consumer_key.hpp"

namespace telegram {

namespace json = boost::json;
using xconn::sdk::kv_batch;
using namespace std::chrono_literals;

// The channels bound to a chat (updates are routed by chat id).
std::vector<std::string> telegram_plugin::channels_of(const std::string& key, const std::string& chat_id) {
  std::vector<std::string> out;
  std::lock_guard lock(mutex_);
  for (const auto& [id, b] : channels_)
    if (b.key == key && (chat_id.empty() || b.chat_id == chat_id)) out.push_back(id);
  return out;
}

auto telegram_plugin::poll(std::shared_ptr<poller> p) -> awaitable<void> {
  const std::string cursor_key = "offset/" + p->key;
  auto kept = kv_get(cursor_key);
  // A build before the HMAC keys kept the offset under the bare hash of the token: carried over, then erased.
  if (auto legacy = "offset/" + xconn::kit::legacy_consumer_key("bot-", p->token); !kept && legacy != cursor_key)
    if ((kept = kv_get(legacy))) host().kv_write(kv_batch().put(cursor_key, *kept).erase(legacy));
  // A named function, not a lambda in the co_await: GCC 12 destroys a lambda temporary of a co_await expression
  // twice when the frame is destroyed while suspended (a stop), which released p twice.
  poller::poll_fn next_page = [this, p](const update_offset& offset) { return poll_page(p, offset); };
  co_await p->run(update_offset::from_kept(kept.value_or("")), std::move(next_page));
}

// One getUpdates: the page of messages for the channels bound to their chats, or what the loop does instead.
auto telegram_plugin::poll_page(std::shared_ptr<poller> p, update_offset offset) -> awaitable<poller::page> {
  json::object params{{"offset", offset.next()}, {"timeout", settings_.poll_timeout_s},
                      {"allowed_updates", json::array{"message", "channel_post"}}};
  auto r = co_await api_->call(p->token, "getUpdates", params, std::chrono::seconds(settings_.poll_timeout_s + 10));
  if (!r.reached() || r.http_status >= 500) co_return poller::outage("telegram_unreachable");
  if (r.http_status == 409) co_return poller::outage("telegram_conflict");
  if (r.http_status == 429) co_return poller::again();  // the next poll waits out the token's hold
  if (r.http_status == 401 || r.http_status == 404) {
    for (const auto& id : channels_of(p->key, "")) set_channel_status(id, "revoked");
    co_return poller::stop_polling();  // the host releases the consumer with the credential
  }
  if (!r.ok || !r.result.is_array()) co_return poller::outage("telegram_bad_answer");
  poller::page page;
  const auto updates = new_updates(r.result.as_array(), offset);
  for (const auto& u : updates) {
    auto retry = update_offset::rewound_to(u.id);  // asked again from this update when it was not stored
    page.next = u.next;
    auto emit = u.message ? emit_of(*u.message) : std::nullopt;
    if (!emit) {
      host().count("updates_unsupported");  // an update kind not asked for (allowed_updates), or no chat named
      continue;
    }
    auto targets = channels_of(p->key, id_text(u.message->at("chat").as_object().if_contains("id")));
    if (targets.empty()) continue;
    auto file = media_of(*u.message);
    std::optional<std::string> bytes;
    if (file) {
      bytes = co_await api_->fetch_file(p->token, file->file_id, max_media_bytes, std::chrono::seconds(60));
      if (!bytes) host().warn("telegram: a message's file could not be fetched; sent without it");
    }
    // A reply's quoted message goes first, as context of the reply (the host places it, docs/protocol.md "Inbound
    // messages", "Outbound messages").
    auto quoted = quoted_context(*u.message);
    const std::string label = "update " + std::to_string(u.id);
    for (const auto& channel : targets) {
      if (quoted) page.messages.push_back({channel, json::serialize(*quoted), retry, label, true});
      auto message = *emit;
      if (bytes) {
        auto stored = co_await put_file(channel, file->filename, file->mime_type, *bytes);
        auto ref = xconn::adapter::stored_file_ref(stored);
        if (!ref.empty()) message["files"] = json::array{json::object{{"file_ref", ref}}};
      }
      if (string_at(message, "text").empty() && !message.contains("files"))
        message["text"] = "[a file that could not be fetched]";
      page.messages.push_back({channel, json::serialize(message), retry, label, false});
    }
  }
  // Only repeats (the saturated INT64_MAX, which no offset confirms): not a busy loop of polls answered at once.
  if (!page.next && !r.result.as_array().empty()) page.pause_after = 1s;
  co_return page;
}

}  // namespace telegram
