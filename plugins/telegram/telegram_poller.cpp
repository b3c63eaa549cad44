// The telegram plugin's long poll, one per bot token shared by its channels: getUpdates from the kept offset, each
// page's messages emitted together with the offset riding on the last of them (durable exactly when they all are),
// a message's file fetched at once, a quoted message sent first as context; the poller's trouble on the health board.
#include "telegram_plugin.hpp"

#include "telegram_json.hpp"
#include "telegram_offset.hpp"
#include "kit/consumer_key.hpp"
#include "kit/emit_refusal.hpp"

#include <atomic>
#include <functional>

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
  auto offset = update_offset::from_kept(kept.value_or(""));
  const std::string source = "poller " + p->key;
  while (!p->stopping) {
    json::object params{{"offset", offset.next()}, {"timeout", settings_.poll_timeout_s},
                        {"allowed_updates", json::array{"message", "channel_post"}}};
    auto r = co_await call(p->token, "getUpdates", params, std::chrono::seconds(settings_.poll_timeout_s + 10));
    if (p->stopping) break;
    const char* trouble = nullptr;
    if (!r.reached() || r.http_status >= 500) trouble = "telegram_unreachable";
    else if (r.http_status == 409) trouble = "telegram_conflict";
    else if (r.http_status == 429) continue;  // the next poll waits out the token's hold
    else if (r.http_status == 401 || r.http_status == 404) {
      for (const auto& id : channels_of(p->key, "")) set_channel_status(id, "revoked");
      break;  // the host releases the consumer with the credential
    } else if (!r.ok || !r.result.is_array()) trouble = "telegram_bad_answer";
    health_.set(source, trouble ? trouble : "");
    if (trouble) {
      co_await pause(2s);
      continue;
    }
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
        host().count("updates_unsupported");  // an update kind not asked for (allowed_updates), or no chat named
        continue;
      }
      auto targets = channels_of(p->key, id_text(m->as_object().at("chat").as_object().if_contains("id")));
      if (targets.empty()) continue;
      auto file = media_of(m->as_object());
      std::optional<std::string> bytes;
      if (file) {
        bytes = co_await fetch_media(p->token, *file);
        if (!bytes) host().warn("telegram: a message's file could not be fetched; sent without it");
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
      co_await keep(kv_batch().put(cursor_key, rewound.kept()));
      offset = rewound;
      co_await pause(1s);
      continue;
    }
    offset = page_next;
  }
  health_.set(source, "");  // a stopped poller's trouble is no one's any more
}

// Emits a page's messages without waiting between them, the cursor (next) with the last; waits for them all. The
// update id to ask again from (the first message not stored, first when the cursor alone was not), or nullopt.
auto telegram_plugin::emit_page(std::vector<page_emit> emits, std::string cursor_key, std::string next,
                                long long first) -> awaitable<std::optional<long long>> {
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
      if (i + 1 == emits.size()) host().emit_with(emits[i].channel, emits[i].text, cursor, each);
      else host().emit(emits[i].channel, emits[i].text, each);
    }
  });
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].ok) continue;
    const auto& code = all[i].failure.code;
    if (xconn::kit::emit_refused_for_good(code)) {
      // Asking for it again would bring the same refusal every second, forever: it is skipped, and the host's
      // `error` event has recorded it. The host's reason names the field, never the text.
      if (code == "invalid_message") {
        host().count("updates_refused");
        host().warn("telegram: update " + std::to_string(emits[i].update_id) +
                    " was refused by the host and is skipped (" + all[i].failure.message + ")");
      }
      continue;
    }
    if (emits[i].context) {
      host().warn("telegram: a quoted message was not kept as context");
      continue;
    }
    host().warn("telegram: update " + std::to_string(emits[i].update_id) + " was not stored (" + code +
                "); asked for again");
    co_return emits[i].update_id;
  }
  // The cursor rode with the last emit: refused with it, it is kept on its own.
  if (!all.back().ok && !(co_await keep(cursor))) co_return emits.back().update_id;
  co_return std::nullopt;
}

auto telegram_plugin::keep(kv_batch batch) -> awaitable<bool> { co_return (co_await kv_write(std::move(batch))).ok; }

}  // namespace telegram
