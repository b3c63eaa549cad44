// A getUpdates page read, and what a Bot API update's message becomes for the host: the emit (text or caption, msg_id, sender, channel_key, at),
// the file it carries, and the quoted message of a reply as context.
#pragma once

#include "file_kind.hpp"
#include "telegram_described.hpp"
#include "telegram_json.hpp"
#include "telegram_offset.hpp"
#include "telegram_text.hpp"
#include "kit/utf8_bound.hpp"

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telegram {

// The one file a message carries (the largest photo size; a document, video, audio or voice note), or nullopt.
struct media {
  std::string file_id;
  std::string filename;
  std::string mime_type;
};
inline std::optional<media> media_of(const boost::json::object& m) {
  if (auto* photo = m.if_contains("photo"); photo && photo->is_array() && !photo->as_array().empty()) {
    const auto& largest = photo->as_array().back();
    if (largest.is_object()) return media{string_at(largest.as_object(), "file_id"), "photo.jpg", "image/jpeg"};
  }
  // A round video note has neither name nor type: Telegram's are MP4.
  for (const char* kind : {"document", "video", "audio", "voice", "video_note"}) {
    auto* f = m.if_contains(kind);
    if (!f || !f->is_object()) continue;
    const auto& o = f->as_object();
    const std::string k = kind;
    auto name = string_at(o, "file_name");
    if (name.empty()) name = k == "voice" ? "voice.ogg" : k == "video_note" ? "video_note.mp4" : k;
    auto mime = string_at(o, "mime_type");
    if (mime.empty() && k == "video_note") mime = "video/mp4";
    return media{string_at(o, "file_id"), name, mime.empty() ? "application/octet-stream" : mime};
  }
  return std::nullopt;
}

inline constexpr long long max_date_s = (1LL << 53) / 1000;  // the host takes `at` up to 2^53 ms

// An update's message as an emit; nullopt only when it names no chat. One with no text, caption or file this
// build forwards (a sticker, a location, a poll, someone joining) is described in its text (telegram_described.hpp).
inline std::optional<boost::json::object> emit_of(const boost::json::object& m) {
  const auto* chat = m.if_contains("chat");
  if (!chat || !chat->is_object()) return std::nullopt;
  auto text = string_at(m, "text");
  if (text.empty()) text = string_at(m, "caption");
  std::optional<bool> trigger;
  if (text.empty() && !media_of(m)) {
    auto d = describe_message(m);
    text = std::move(d.text);
    if (!d.trigger) trigger = false;
  }
  auto chat_id = id_text(chat->as_object().if_contains("id"));
  auto kind = string_at(chat->as_object(), "type") == "private" ? "direct" : "group";
  boost::json::object emit{{"text", text},
                    {"msg_id", chat_id + ":" + id_text(m.if_contains("message_id"))},
                    {"channel_key", std::string("telegram/") + kind + "/" + chat_id}};
  if (trigger) emit["trigger"] = *trigger;
  if (auto* from = m.if_contains("from"); from && from->is_object()) {
    const auto& f = from->as_object();
    emit["sender_id"] = id_text(f.if_contains("id"));
    // A name of 64 + 64 characters is up to 513 bytes: cut to the host's bound rather than have the message refused.
    emit["sender_name"] = xconn::kit::emit_display_field(
        display_name(string_at(f, "first_name"), string_at(f, "last_name"), string_at(f, "username")));
  } else {
    emit["sender_id"] = chat_id;
    emit["sender_name"] = xconn::kit::emit_display_field(string_at(chat->as_object(), "title"));
  }
  // Unix seconds as the host's milliseconds, only when in its range (and * 1000 cannot overflow).
  if (auto* date = m.if_contains("date"); date && date->is_int64() && date->as_int64() >= 0 &&
                                          date->as_int64() <= max_date_s)
    emit["at"] = date->as_int64() * 1000;
  return emit;
}

// The message a reply quotes, as a context-only emit (trigger false) with an id of its own.
inline std::optional<boost::json::object> quoted_context(const boost::json::object& m) {
  auto* q = m.if_contains("reply_to_message");
  if (!q || !q->is_object()) return std::nullopt;
  auto context = emit_of(q->as_object());
  if (!context || string_at(*context, "text").empty()) return std::nullopt;
  (*context)["trigger"] = false;
  (*context)["msg_id"] = string_at(*context, "msg_id") + ":quoted-by:" + id_text(m.if_contains("message_id"));
  return context;
}

// One update of a getUpdates page: its id, the offset once it is handled, and its message (a message or a channel
// post; nullptr for a kind this build did not ask for).
struct page_update {
  long long id = 0;
  update_offset next;
  const boost::json::object* message = nullptr;
};

// The updates of a page not handled before offset (a server may repeat what was confirmed), in order; the page
// must outlive them.
inline std::vector<page_update> new_updates(const boost::json::array& page, update_offset offset) {
  std::vector<page_update> out;
  for (const auto& u : page) {
    auto* id = u.is_object() ? u.as_object().if_contains("update_id") : nullptr;
    if (!id || !id->is_int64() || offset.handled(id->as_int64())) continue;
    offset = offset.after(id->as_int64());
    const auto* m = u.as_object().if_contains("message");
    if (!m) m = u.as_object().if_contains("channel_post");
    out.push_back({id->as_int64(), offset, m && m->is_object() ? &m->as_object() : nullptr});
  }
  return out;
}

}  // namespace telegram
