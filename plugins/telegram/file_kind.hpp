// What a file is when the plugin has only its bytes (telegram_message_send_media names a file_ref alone, and a host
// older than ABI 1.7 has no xconn_host_file_info to tell its stored name and type): its MIME type from the first
// bytes, and a name with the matching extension, so Telegram shows "file.pdf" as a PDF rather than an unnamed blob.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace telegram {

// The type of a file from its first bytes (JPEG, PNG, GIF, WebP, MP4, WebM, PDF, ZIP, Ogg, MP3), else
// application/octet-stream.
inline std::string sniff_mime(std::string_view bytes) {
  auto starts = [&](std::string_view magic, std::size_t at = 0) {
    return at <= bytes.size() && bytes.substr(at, magic.size()) == magic;  // a file of 0-3 bytes too
  };
  if (starts("\xFF\xD8\xFF")) return "image/jpeg";
  if (starts("\x89PNG\r\n\x1A\n")) return "image/png";
  if (starts("GIF8")) return "image/gif";
  if (starts("RIFF") && starts("WEBP", 8)) return "image/webp";
  if (starts("ftyp", 4)) return "video/mp4";
  if (starts("\x1A\x45\xDF\xA3")) return "video/webm";
  if (starts("%PDF-")) return "application/pdf";
  if (starts("PK\x03\x04")) return "application/zip";
  if (starts("OggS")) return "audio/ogg";
  if (starts("ID3") || starts("\xFF\xFB")) return "audio/mpeg";
  return "application/octet-stream";
}

// "file" with the extension of mime_type when it is one of the types above ("file.pdf"), else "file".
inline std::string name_for(std::string_view mime_type) {
  static constexpr std::pair<std::string_view, std::string_view> extensions[] = {
      {"image/jpeg", ".jpg"}, {"image/png", ".png"},        {"image/gif", ".gif"},       {"image/webp", ".webp"},
      {"video/mp4", ".mp4"},  {"video/webm", ".webm"},      {"application/pdf", ".pdf"}, {"application/zip", ".zip"},
      {"audio/ogg", ".ogg"},  {"audio/mpeg", ".mp3"},       {"text/plain", ".txt"}};
  for (const auto& [type, extension] : extensions)
    if (type == mime_type) return "file" + std::string(extension);
  return "file";
}

// How the Bot API takes a file of mime_type: sendPhoto for images, sendVideo for videos, sendDocument for anything
// else; the multipart field it goes in, and what the media tool reports it as.
struct upload_kind {
  std::string method, field, media_type;
};
inline upload_kind upload_kind_of(std::string_view mime_type) {
  if (mime_type.starts_with("image/")) return {"sendPhoto", "photo", "image"};
  if (mime_type.starts_with("video/")) return {"sendVideo", "video", "video"};
  return {"sendDocument", "document", "file"};
}

}  // namespace telegram
