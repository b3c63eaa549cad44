// The wechat plugin's replies (docs/wechat.md "Replies"): a final goes to the sender of the message it answers
// with that sender's latest context_token, split into parts of at most 4,000 code points; its files are encrypted
// with a fresh key, uploaded to the CDN and sent as media messages; the two tools; typing. WeChat's refusals:
// -14 ends the bot's session (the channel turns expired), -2 is its reply rules (send_failed, not asked again).
#include "wechat_plugin.hpp"

#include "ilink_crypto.hpp"
#include "wechat_text.hpp"
#include "kit/json_fields.hpp"
#include "kit/unix_time.hpp"

#include <xconn/adapter/answers.hpp>
#include <xconn/adapter/media_files.hpp>

namespace wechat {

namespace json = boost::json;
namespace answers = xconn::adapter;
using xconn::kit::string_at;
using namespace std::chrono_literals;

namespace {

constexpr auto send_timeout = 8s;

std::string new_client_id() { return "xconn-" + to_hex(random_bytes(8)); }

const char* kind_name(int media_type) { return media_type == 1 ? "image" : media_type == 2 ? "video" : "file"; }

}  // namespace

// user "" : whoever wrote last on the channel, else the signed-in user.
auto wechat_plugin::recipient_of(const binding& b, const std::string& user) const -> recipient {
  recipient to{user, ""};
  if (to.user.empty()) to.user = kv_get("last/" + b.channel).value_or(b.user_id);
  to.context_token = kv_get("ctx/" + b.key + "/" + to.user).value_or("");
  return to;
}

auto wechat_plugin::send_msg(binding b, json::object msg) -> awaitable<ilink_reply> {
  json::object body{{"msg", std::move(msg)}};
  auto r = co_await api_->bot_call(b.baseurl, b.token, "sendmessage", body, send_timeout);
  if (r.ok()) host().count("sends");
  co_return r;
}

std::pair<std::string, bool> wechat_plugin::refusal_of(const binding& b, const ilink_reply& r) {
  if (r.session_over()) {
    expire(b);
    return {"connection_not_authenticated", false};
  }
  if (r.unreachable()) return {"target_unreachable", true};
  if (r.http_status == 429) return {"rate_limited", true};  // asked to slow down: never a refusal for good
  // -2: WeChat's reply rules (an old context_token, a quota). Its words go to the log only.
  host().warn("wechat: a send was refused (ret " + std::to_string(r.ret) + ")");
  host().count("sends_refused");
  return {"send_failed", false};
}

auto wechat_plugin::deliver(binding b, json::object reply, completion done) -> awaitable<void> {
  std::string user;
  if (auto* to = reply.if_contains("reply_to"); to && to->is_object()) user = string_at(to->as_object(), "sender_id");
  if (auto key = string_at(reply, "channel_key"); user.empty() && key.starts_with("wechat/direct/"))
    user = key.substr(14);
  auto to = recipient_of(b, user);
  auto key = string_at(reply, "idempotency_key");
  const std::string base_id = key.empty() ? new_client_id() : "xconn-" + key;  // the same on every retry
  int sent = 0;
  auto refuse = [&](const ilink_reply& r) {
    auto [code, retryable] = refusal_of(b, r);
    done.ok(answers::send_refused(code, retryable && sent == 0));
  };
  for (const auto& part : split_text(string_at(reply, "text"))) {
    auto r = co_await send_msg(b, text_message(to.user, to.context_token, base_id + "-" + std::to_string(sent), part));
    if (!r.ok()) co_return refuse(r);
    ++sent;
  }
  if (auto* files = reply.if_contains("files"); files && files->is_array())
    for (const auto& f : files->as_array()) {
      auto ref = f.is_object() ? string_at(f.as_object(), "file_ref") : "";
      auto r = co_await send_file(b, to, base_id + "-" + std::to_string(sent), ref, nullptr);
      if (!r) co_return done.ok(answers::send_refused("file_ref_not_found", false));
      if (!r->ok()) co_return refuse(*r);
      ++sent;
    }
  done.ok(answers::send_delivered(base_id));
}

// The file encrypted with a fresh key, uploaded to where getuploadurl says, then sent as an image, a video or a file.
auto wechat_plugin::send_file(binding b, recipient to, std::string client_id, std::string file_ref, json::object* facts)
    -> awaitable<std::optional<ilink_reply>> {
  auto file = xconn::adapter::read_channel_file(host(), b.channel, file_ref, max_media_bytes, "", "");
  if (!file) co_return std::nullopt;
  if (file->filename.empty()) file->filename = "file";
  const int media_type = upload_media_type(file->mime_type, file->filename);
  const auto key = random_bytes(16), filekey = to_hex(random_bytes(16)), md5 = md5_hex(file->bytes);
  auto cipher = aes_ecb_encrypt(key, file->bytes);
  const auto cipher_bytes = cipher.size(), plain_bytes = file->bytes.size();
  json::object ask{{"filekey", filekey},       {"media_type", media_type},     {"to_user_id", to.user},
                   {"rawsize", plain_bytes},   {"rawfilemd5", md5},            {"filesize", cipher_bytes},
                   {"no_need_thumb", true},    {"aeskey", to_hex(key)}};
  auto url = co_await api_->bot_call(b.baseurl, b.token, "getuploadurl", ask, send_timeout);
  if (!url.ok()) co_return url;
  auto param = co_await api_->upload(url.body, filekey, std::move(cipher));
  if (!param) {
    ilink_reply failed;
    failed.transport_error = "upload_failed";
    co_return failed;
  }
  if (facts)
    *facts = {{"media_type", kind_name(media_type)}, {"filename", file->filename}, {"byte_size", plain_bytes}};
  // The key as base64 of its hex text, the form WeChat's own clients send.
  co_return co_await send_msg(b, media_message(to.user, to.context_token, client_id, kind_name(media_type), *param,
                                               base64(to_hex(key)), cipher_bytes, plain_bytes, file->filename, md5));
}

auto wechat_plugin::message_tool(binding b, std::string text, completion done) -> awaitable<void> {
  if (text.empty()) co_return done.fail(answers::invalid_argument("text must not be empty"));
  if (split_text(text).size() > 1) co_return done.fail({"message_too_long", "at most 4,000 characters", false});
  auto to = recipient_of(b, "");
  auto id = new_client_id();
  auto r = co_await send_msg(b, text_message(to.user, to.context_token, id, text));
  if (!r.ok()) {
    auto [code, retryable] = refusal_of(b, r);
    co_return done.fail({code, "WeChat did not take the message", retryable});
  }
  done.ok(answers::tool_sent().with("message_id", json::string(id)).with("sent_at", xconn::kit::unix_ms())
              .with("recipient_ref", json::string(to.user)).json());
}

auto wechat_plugin::media_tool(binding b, std::string file_ref, std::string text, completion done) -> awaitable<void> {
  if (split_text(text).size() > 1) co_return done.fail({"message_too_long", "at most 4,000 characters", false});
  auto to = recipient_of(b, "");
  auto id = new_client_id();
  if (!text.empty()) {
    auto r = co_await send_msg(b, text_message(to.user, to.context_token, id + "-text", text));
    if (!r.ok()) {
      auto [code, retryable] = refusal_of(b, r);
      co_return done.fail({code, "WeChat did not take the text", retryable});
    }
  }
  json::object facts;
  auto r = co_await send_file(b, to, id, file_ref, &facts);
  if (!r) co_return done.fail({"file_ref_not_found", "no uploaded file with that file_ref on this channel", false});
  if (!r->ok()) {
    auto [code, retryable] = refusal_of(b, *r);
    co_return done.fail({code, "WeChat did not take the file", retryable && text.empty()});
  }
  auto result = answers::tool_sent().with("message_id", json::string(id)).with("file_ref", json::string(file_ref));
  for (const auto& [k, v] : facts) result.with(k, v);
  done.ok(result.json());
}

// Typing shows for the person who wrote last: a ticket from getconfig, then sendtyping 1 (on) or 2 (off).
auto wechat_plugin::typing(binding b, bool on) -> awaitable<void> {
  auto to = recipient_of(b, "");
  json::object ask{{"ilink_user_id", to.user}};
  if (!to.context_token.empty()) ask["context_token"] = to.context_token;
  auto config = co_await api_->bot_call(b.baseurl, b.token, "getconfig", ask, 10s);
  auto ticket = string_at(config.body, "typing_ticket");
  if (!config.ok() || ticket.empty()) co_return;
  json::object typing{{"ilink_user_id", to.user}, {"typing_ticket", ticket}, {"status", on ? 1 : 2}};
  co_await api_->bot_call(b.baseurl, b.token, "sendtyping", typing, 10s);
}

}  // namespace wechat
