// What a WeixinMessage (getupdates' msgs[]) becomes for the host, and the `msg` of a sendmessage. Reading: the
// emit (text, msg_id, sender, channel_key, at), the quoted message as context, the media to fetch from the CDN with
// their keys, and what a reply needs (the sender, the context_token). Only those fields reach the emit: CDN params,
// AES keys and the context_token stay in the plugin.
#pragma once

#include "ilink_crypto.hpp"
#include "kit/json_fields.hpp"
#include "kit/utf8_bound.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wechat {

using xconn::kit::string_at;

// MessageItem.type
inline constexpr std::int64_t item_text = 1, item_image = 2, item_voice = 3, item_file = 4, item_video = 5;
inline constexpr std::int64_t message_type_bot = 2;
inline constexpr std::int64_t message_state_finish = 2;
inline constexpr std::int64_t max_at_ms = 1LL << 53;                 // the host's range for `at`
inline constexpr std::size_t max_emit_text_bytes = 64 * 1024;        // the host's bound on an emit's text
inline constexpr std::size_t max_media_per_message = 16;             // the host's bound on an emit's files

// A 64-bit id as decimal text, never through a double: an int64, a uint64 (WeChat's ids pass 2^63) or a string
// of 1..20 digits; "" for anything else.
inline std::string id_text(const boost::json::value* v) {
  if (!v) return "";
  if (v->is_int64()) return std::to_string(v->as_int64());
  if (v->is_uint64()) return std::to_string(v->as_uint64());
  if (!v->is_string()) return "";
  std::string_view s = v->as_string();
  bool digits = !s.empty() && s.size() <= 20 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? std::string(s) : std::string();
}

// One file a message carries, where it is on the CDN and its key (16 raw bytes; "" when the body is plain, or when
// the key it named did not decode: bad_key).
struct media_item {
  std::string kind;  // image | voice | file | video
  std::string query_param, full_url, key;
  std::string filename, mime_type;
  bool bad_key = false;
};

namespace detail {

inline const boost::json::object* object_at(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

inline std::int64_t int_at(const boost::json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v && v->is_int64() ? v->as_int64() : 0;
}

inline bool has_location(const boost::json::object* media) {
  return media && (!string_at(*media, "encrypt_query_param").empty() || !string_at(*media, "full_url").empty());
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline std::string extension_of(std::string_view filename) {
  auto dot = filename.rfind('.');
  return dot == std::string_view::npos ? std::string() : lower(filename.substr(dot + 1));
}

// A file item's type from its name: WeChat sends none.
inline std::string mime_by_extension(std::string_view filename) {
  static constexpr std::pair<std::string_view, std::string_view> types[] = {
      {"pdf", "application/pdf"}, {"txt", "text/plain"}, {"md", "text/markdown"}, {"csv", "text/csv"},
      {"json", "application/json"}, {"html", "text/html"}, {"zip", "application/zip"},
      {"doc", "application/msword"},
      {"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
      {"xls", "application/vnd.ms-excel"},
      {"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
      {"ppt", "application/vnd.ms-powerpoint"},
      {"pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
      {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"png", "image/png"}, {"gif", "image/gif"},
      {"webp", "image/webp"}, {"mp3", "audio/mpeg"}, {"wav", "audio/wav"}, {"mp4", "video/mp4"}};
  auto ext = extension_of(filename);
  for (const auto& [e, mime] : types)
    if (ext == e) return std::string(mime);
  return "application/octet-stream";
}

// A file item's name as a plain file name: no folders, printable, bounded; "wechat-file" when nothing is left.
inline std::string file_name_of(std::string_view name) {
  auto slash = name.find_last_of("/\\");
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  auto out = xconn::kit::utf8_bounded(name, 255, true);
  return out.empty() || out == "." || out == ".." ? "wechat-file" : out;
}

// The media of one MessageItem, or nullopt for a type that carries none.
inline std::optional<media_item> media_of_item(const boost::json::object& item) {
  auto type = int_at(item, "type");
  const char* field = type == item_image ? "image_item" : type == item_voice ? "voice_item"
                    : type == item_file  ? "file_item"  : type == item_video ? "video_item" : nullptr;
  if (!field) return std::nullopt;
  static const boost::json::object none;
  const auto* body = object_at(item, field);
  if (!body) body = &none;
  media_item out;
  // Image and video fall back to their thumbnail when the full media names no location.
  const auto* media = object_at(*body, "media");
  if ((type == item_image || type == item_video) && !has_location(media) && has_location(object_at(*body, "thumb_media")))
    media = object_at(*body, "thumb_media");
  if (media) {
    out.query_param = string_at(*media, "encrypt_query_param");
    out.full_url = string_at(*media, "full_url");
  }
  // An image's own hex key comes first; else the CDNMedia's base64 key. No key at all: the body is plain.
  std::optional<std::string> key;
  bool named_a_key = false;
  if (type == item_image) {
    auto hex = string_at(*body, "aeskey");
    named_a_key = !hex.empty();
    key = hex_key(hex);
  }
  if (!key && media) {
    auto b64 = string_at(*media, "aes_key");
    named_a_key = named_a_key || !b64.empty();
    if (!b64.empty()) key = media_key(b64);
  }
  if (key) out.key = std::move(*key);
  out.bad_key = named_a_key && out.key.empty();
  switch (type) {
    case item_image: out.kind = "image", out.filename = "wechat-image.jpg", out.mime_type = "image/jpeg"; break;
    case item_voice: out.kind = "voice", out.filename = "voice.silk", out.mime_type = "audio/silk"; break;
    case item_video: out.kind = "video", out.filename = "wechat-video.mp4", out.mime_type = "video/mp4"; break;
    default:
      out.kind = "file";
      out.filename = file_name_of(string_at(*body, "file_name"));
      out.mime_type = mime_by_extension(out.filename);
  }
  return out;
}

inline const boost::json::array* items_of(const boost::json::object& m) {
  auto* v = m.if_contains("item_list");
  return v && v->is_array() ? &v->as_array() : nullptr;
}

// An item's text: a text item's text, or a voice item's transcript.
inline std::string item_text_of(const boost::json::object& item) {
  auto type = int_at(item, "type");
  if (type == item_text)
    if (auto* t = object_at(item, "text_item")) return string_at(*t, "text");
  if (type == item_voice)
    if (auto* v = object_at(item, "voice_item")) return string_at(*v, "text");
  return "";
}

inline void append_line(std::string& text, std::string_view line) {
  if (line.empty()) return;
  if (!text.empty()) text += '\n';
  text += line;
}

}  // namespace detail

// The files a message carries, in item order, at most max_media_per_message. An item with neither param nor URL
// is still listed (the plugin names it as missing), as is one whose key did not decode (bad_key).
inline std::vector<media_item> media_of(const boost::json::object& message) {
  std::vector<media_item> out;
  auto* items = detail::items_of(message);
  if (!items) return out;
  for (const auto& item : *items) {
    if (out.size() == max_media_per_message) break;
    if (!item.is_object()) continue;
    if (auto media = detail::media_of_item(item.as_object())) out.push_back(std::move(*media));
  }
  return out;
}

// A message for the host: the emit, the message it quotes (a context-only emit), its media (the quoted message's
// when it has none of its own), and what a reply to it needs.
struct inbound {
  boost::json::object emit;
  std::optional<boost::json::object> quoted;
  std::vector<media_item> media;
  std::string from_user, context_token;
};

// nullopt for the bot's own message (message_type 2) and for one with no sender.
inline std::optional<inbound> inbound_of(const boost::json::object& m, std::string_view bot_id) {
  using namespace detail;
  if (int_at(m, "message_type") == message_type_bot) return std::nullopt;
  auto from = string_at(m, "from_user_id");
  if (from.empty()) return std::nullopt;
  inbound in;
  in.from_user = from;
  in.context_token = string_at(m, "context_token");
  in.media = media_of(m);

  std::string text;
  const boost::json::object* quote = nullptr;
  if (auto* items = items_of(m))
    for (const auto& item : *items) {
      if (!item.is_object()) continue;
      append_line(text, item_text_of(item.as_object()));
      if (auto* ref = object_at(item.as_object(), "ref_msg"); ref && !quote) quote = ref;
    }

  // An id WeChat leaves at 0 falls back to the client's.
  auto id = id_text(m.if_contains("message_id"));
  if (id.empty() || id == "0") id = string_at(m, "client_id");
  const std::string msg_id = std::string(bot_id) + ":" + id;
  auto group = string_at(m, "group_id");
  const std::string channel_key = group.empty() ? "wechat/direct/" + from : "wechat/group/" + group;
  auto name = string_at(m, "display_name");

  // A message with nothing this build forwards (a tool-call item, a kind WeChat adds later) is still recorded, as
  // context: the host takes no emit without text or files.
  const bool forwarded = !text.empty() || !in.media.empty();
  if (!forwarded) text = "(a WeChat message of a kind this connector does not forward)";
  in.emit = {{"text", xconn::kit::utf8_bounded(text, max_emit_text_bytes)},
             {"msg_id", msg_id},
             {"sender_id", from},
             {"sender_name", name.empty() ? from : xconn::kit::emit_display_field(name)},
             {"channel_key", channel_key}};
  if (auto* at = m.if_contains("create_time_ms"); at && at->is_int64() && at->as_int64() >= 0 && at->as_int64() <= max_at_ms)
    in.emit["at"] = at->as_int64();
  if (!forwarded) in.emit["trigger"] = false;

  if (quote) {
    std::string quoted_text = string_at(*quote, "title");
    const auto* quoted_item = object_at(*quote, "message_item");
    if (quoted_item) append_line(quoted_text, item_text_of(*quoted_item));
    if (!quoted_text.empty())
      in.quoted = boost::json::object{{"text", xconn::kit::utf8_bounded(quoted_text, max_emit_text_bytes)},
                                      {"msg_id", msg_id + ":quoted"},
                                      {"sender_id", from},
                                      {"channel_key", channel_key},
                                      {"trigger", false}};
    if (in.media.empty() && quoted_item)
      if (auto media = media_of_item(*quoted_item)) in.media.push_back(std::move(*media));
  }
  return in;
}

namespace detail {

inline boost::json::object outbound(std::string_view to_user, std::string_view context_token,
                                    std::string_view client_id, boost::json::object item) {
  boost::json::object msg{{"to_user_id", to_user},
                          {"client_id", client_id},
                          {"message_type", message_type_bot},
                          {"message_state", message_state_finish},
                          {"item_list", boost::json::array{std::move(item)}}};
  if (!context_token.empty()) msg["context_token"] = context_token;
  return msg;
}

}  // namespace detail

// The `msg` of a sendmessage carrying text.
inline boost::json::object text_message(std::string_view to_user, std::string_view context_token,
                                        std::string_view client_id, std::string_view text) {
  return detail::outbound(to_user, context_token, client_id,
                          {{"type", item_text}, {"text_item", boost::json::object{{"text", text}}}});
}

// The `msg` of a sendmessage carrying one uploaded file: kind image, video, or anything else as a file.
// cipher_size is the uploaded (padded) size, plain_size the file's own.
inline boost::json::object media_message(std::string_view to_user, std::string_view context_token,
                                         std::string_view client_id, std::string_view kind,
                                         std::string_view query_param, std::string_view aes_key_b64,
                                         std::size_t cipher_size, std::size_t plain_size, std::string_view filename,
                                         std::string_view md5_hex) {
  boost::json::object media{{"encrypt_query_param", query_param}, {"aes_key", aes_key_b64}, {"encrypt_type", 1}};
  const auto cipher = static_cast<std::int64_t>(cipher_size);
  boost::json::object item;
  if (kind == "image") {
    item = {{"type", item_image}, {"image_item", boost::json::object{{"media", std::move(media)}, {"mid_size", cipher}}}};
  } else if (kind == "video") {
    item = {{"type", item_video}, {"video_item", boost::json::object{{"media", std::move(media)}, {"video_size", cipher}}}};
  } else {
    item = {{"type", item_file},
            {"file_item", boost::json::object{{"media", std::move(media)},
                                              {"file_name", filename},
                                              {"md5", md5_hex},
                                              {"len", std::to_string(plain_size)}}}};
  }
  return detail::outbound(to_user, context_token, client_id, std::move(item));
}

// getuploadurl's media_type for a file: 1 image, 2 video, 3 anything else (audio too: it goes as a file).
inline int upload_media_type(std::string_view mime, std::string_view filename) {
  if (mime.starts_with("image/")) return 1;
  if (mime.starts_with("video/")) return 2;
  auto ext = detail::extension_of(filename);
  for (std::string_view e : {"jpg", "jpeg", "png", "gif", "webp", "bmp", "heic"})
    if (ext == e) return 1;
  for (std::string_view e : {"mp4", "mov", "m4v", "webm", "avi", "mkv"})
    if (ext == e) return 2;
  return 3;
}

}  // namespace wechat
