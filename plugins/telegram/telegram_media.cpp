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

// The file as a photo, a video or a document (file_kind.hpp upload_kind_of), with an optional caption.
auto telegram_plugin::send_file(const binding& b, const json::object& item, const std::string& caption,
                                std::string* media_type) -> awaitable<api_reply> {
  // A final's items carry the stored name and type; a tool names only the file_ref: the host tells what it stored
  // (ABI 1.7), and an older host's file is typed and named from its first bytes (file_kind.hpp).
  auto file = xconn::adapter::read_channel_file(host(), b.channel, string_at(item, "file_ref"), max_media_bytes,
                                                string_at(item, "filename"), string_at(item, "mime_type"));
  if (!file) {
    api_reply missing;
    missing.http_status = 404;
    missing.description = "no such file on the channel";
    co_return missing;
  }
  if (file->mime_type.empty()) file->mime_type = sniff_mime(file->bytes);
  if (file->filename.empty()) file->filename = name_for(file->mime_type);
  auto kind = upload_kind_of(file->mime_type);
  if (media_type) *media_type = kind.media_type;
  file_part part{kind.field, file->filename, file->mime_type, std::move(file->bytes)};
  json::object fields;
  fields["chat_id"] = b.chat_id;
  if (!caption.empty()) fields["caption"] = caption;
  co_return co_await api_->upload(b.token, kind.method, fields, part, std::chrono::seconds(60));
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

}  // namespace telegram
