// The telegram plugin's files: a final's or a tool's file sent as a photo, a video or a document (with the text as
// caption when it fits), and a message's file fetched from Telegram at once (its links expire) into the host's store.
#include "telegram_plugin.hpp"

#include "file_kind.hpp"
#include "telegram_json.hpp"
#include "telegram_text.hpp"

#include <xconn/adapter/answers.hpp>

namespace telegram {

namespace json = boost::json;
namespace answers = xconn::adapter;
using namespace std::chrono_literals;

// A file of the channel (the host's store), read whole; nullopt when it is not one of the channel's.
std::optional<std::string> telegram_plugin::read_whole(const std::string& channel, const std::string& file_ref) {
  std::string bytes;
  char buffer[64 * 1024];
  for (;;) {
    auto n = host().read_file(channel, file_ref, bytes.size(), buffer, sizeof buffer);
    if (n < 0) return std::nullopt;
    if (n == 0) return bytes;
    bytes.append(buffer, static_cast<std::size_t>(n));
    if (bytes.size() > max_media_bytes) return std::nullopt;
  }
}

// sendPhoto for images, sendVideo for videos, sendDocument for anything else, with an optional caption.
auto telegram_plugin::send_file(const binding& b, const json::object& item, const std::string& caption,
                                std::string* media_type) -> awaitable<api_reply> {
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
    if (auto stored = host().describe_file(b.channel, string_at(item, "file_ref"))) {
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
  co_return co_await upload(b.token, method, fields, part, std::chrono::seconds(60));
}

// A final with files: the text rides as the first file's caption when it fits (1,024), else goes first.
auto telegram_plugin::send_files(binding b, std::string text, json::array files, completion done) -> awaitable<void> {
  bool as_caption = utf16_units(text) <= max_caption_units;
  std::string first_id;
  auto note_first = [&](const api_reply& r) {
    if (first_id.empty() && r.result.is_object()) first_id = id_text(r.result.as_object().if_contains("message_id"));
  };
  if (!as_caption) {
    for (const auto& part : split_text(text, max_message_units)) {
      auto r = co_await send_message(b, part, std::chrono::steady_clock::now() + 25s);
      if (!r.ok) co_return done.ok(send_refused(b, r, !first_id.empty()));
      note_first(r);
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!files[i].is_object()) continue;
    std::string caption;  // a local, not a temporary in the co_await (GCC 12)
    if (i == 0 && as_caption) caption = text;
    auto r = co_await send_file(b, files[i].as_object(), caption, nullptr);
    if (!r.ok) co_return done.ok(send_refused(b, r, !first_id.empty()));
    note_first(r);
  }
  done.ok(answers::send_delivered(b.chat_id + ":" + first_id));
}

auto telegram_plugin::send_media_tool(binding b, json::object args, completion done) -> awaitable<void> {
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
  done.ok(answers::tool_sent()
              .with("message_id", id ? *id : json::value(nullptr))
              .with("file_ref", json::string(ref))
              .with("media_type", json::string(media_type))
              .json());
}

// Fetches the message's file from Telegram at once (its links expire); nullopt when it cannot be had.
auto telegram_plugin::fetch_media(const std::string& token, const media& file)
    -> awaitable<std::optional<std::string>> {
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
auto telegram_plugin::store_file(const std::string& channel, const media& file, std::string bytes)
    -> awaitable<std::string> {
  auto stored = co_await put_file(channel, file.filename, file.mime_type, std::move(bytes));
  if (!stored.ok) co_return std::string();
  co_return string_at(parse_object(stored.file_json).value_or(json::object{}), "file_ref");
}

}  // namespace telegram
