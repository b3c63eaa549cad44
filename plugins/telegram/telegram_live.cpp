// The telegram plugin's text going out: finals split at Telegram's 4,096 units, a live message made of deltas
// (sent once, then edited, at most one delta edit a second per chat), chat actions, the message tool, and what a
// failed call becomes for the host.
#include "telegram_plugin.hpp"

#include "telegram_json.hpp"
#include "telegram_text.hpp"
#include "telegram_verdict.hpp"

#include <xconn/adapter/answers.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace telegram {

namespace json = boost::json;
namespace answers = xconn::adapter;
using namespace std::chrono_literals;

namespace {

std::string first_part(const std::string& text) {
  auto parts = split_text(text, max_message_units);
  return parts.empty() ? std::string() : parts.front();
}

}  // namespace

// sendMessage of one part, waiting out 429s up to the deadline; the reply as Telegram gave it.
auto telegram_plugin::send_message(const binding& b, const std::string& text,
                                   std::chrono::steady_clock::time_point deadline) -> awaitable<api_reply> {
  json::object params;
  params["chat_id"] = std::stoll(b.chat_id);
  params["text"] = text;
  co_return co_await api_->call(b.token, "sendMessage", params, call_timeout, deadline);
}

auto telegram_plugin::edit_message(const binding& b, const std::string& telegram_id, const std::string& text)
    -> awaitable<api_reply> {
  json::object params;
  params["chat_id"] = std::stoll(b.chat_id);
  params["message_id"] = std::stoll(telegram_id);
  params["text"] = text;
  auto r = co_await api_->call(b.token, "editMessageText", params, call_timeout);
  // The same text again is not an error worth failing for.
  if (r.http_status == 400 && r.description.find("message is not modified") != std::string::npos) r.ok = true;
  co_return r;
}

// What a failed call becomes for the host (telegram_verdict.hpp), with the channel revoked when Telegram says the
// bot lost the chat.
std::string telegram_plugin::failure_code(const binding& b, const api_reply& r) {
  if (r.reached() && revokes_channel(r)) set_channel_status(b.channel, "revoked");
  return failure_code_of(r);
}

std::string telegram_plugin::send_refused(const binding& b, const api_reply& r, bool part_sent) {
  return answers::send_refused(failure_code(b, r), send_retryable(r, part_sent));
}

auto telegram_plugin::chat_action(binding b) -> awaitable<void> {
  json::object params;
  params["chat_id"] = std::stoll(b.chat_id);
  params["action"] = "typing";
  co_await api_->call(b.token, "sendChatAction", params, call_timeout);
}

// The live message of (channel, message id) brought to the newest text (xconn/adapter/live_messages.hpp): sent
// once, then edited, a chat taking one delta edit a second whichever live message it is for.
auto telegram_plugin::live_update(binding b, std::string message_id, std::string text) -> awaitable<void> {
  xconn::adapter::live_messages::create_fn create = [this, b](std::string t) { return create_live(b, std::move(t)); };
  xconn::adapter::live_messages::edit_fn edit = [this, b](std::string id, std::string t) {
    return edit_live(b, std::move(id), std::move(t));
  };
  co_await live_.update(b.channel + "\n" + message_id, b.key + "\n" + b.chat_id, first_part(text), std::move(create),
                        std::move(edit));
}

auto telegram_plugin::create_live(binding b, std::string text) -> awaitable<std::optional<std::string>> {
  auto r = co_await send_message(b, text, std::chrono::steady_clock::now() + 10s);
  if (!r.ok) co_return std::nullopt;
  co_return r.result.is_object() ? id_text(r.result.as_object().if_contains("message_id")) : std::string();
}

auto telegram_plugin::edit_live(binding b, std::string telegram_id, std::string text) -> awaitable<bool> {
  co_return (co_await edit_message(b, telegram_id, text)).ok;
}

auto telegram_plugin::send_text(binding b, std::string text, std::string message_id, completion done)
    -> awaitable<void> {
  auto deadline = std::chrono::steady_clock::now() + 25s;
  std::string first_id, live_id;
  if (!message_id.empty()) live_id = co_await live_.take(b.channel + "\n" + message_id);
  auto parts = split_text(text, max_message_units);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i == 0 && !live_id.empty()) {
      auto edited = co_await edit_message(b, live_id, parts[i]);
      if (edited.ok) {
        first_id = live_id;
        continue;
      }
    }
    auto r = co_await send_message(b, parts[i], deadline);
    if (!r.ok) co_return done.ok(send_refused(b, r, !first_id.empty()));
    if (first_id.empty() && r.result.is_object()) first_id = id_text(r.result.as_object().if_contains("message_id"));
  }
  done.ok(answers::send_delivered(b.chat_id + ":" + first_id));
}

auto telegram_plugin::send_tool(binding b, std::string text, completion done) -> awaitable<void> {
  if (text.empty()) co_return done.fail(answers::invalid_argument("text must not be empty"));
  // Telegram's own bound, the number the model was told (telegram_manifest.hpp).
  if (utf16_units(text) > max_message_units)
    co_return done.fail({"message_too_long", "at most 4,096 UTF-16 code units (most emoji count as two)", false});
  auto r = co_await send_message(b, text, std::chrono::steady_clock::now() + 25s);
  if (!r.ok || !r.result.is_object())
    co_return done.fail({failure_code(b, r), "Telegram did not take the message", !r.reached()});
  auto* id = r.result.as_object().if_contains("message_id");
  done.ok(answers::tool_sent().with("message_id", id ? *id : json::value(nullptr)).json());
}

}  // namespace telegram
