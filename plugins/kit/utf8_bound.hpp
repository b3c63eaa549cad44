// Text a plugin takes from its target, made fit for an emit's bounded fields: the host refuses a whole message
// whose sender_name (or another short field) is over 256 bytes or carries a control character, so a long display
// name must be cut here, between code points, rather than cost the message (docs/plugin-api.md "Refused emits").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace xconn::kit {

// The host's bound on an emit's short fields (sender_id, sender_name, msg_id, channel_key) and on a binding's
// display_name and account_hint.
inline constexpr std::size_t emit_field_max_bytes = 256;

// Bytes of the well-formed UTF-8 sequence that starts text[at] (RFC 3629: no overlong form, surrogate or code
// point past U+10FFFF, none cut short), or 0 when none starts there.
inline std::size_t utf8_sequence_bytes(std::string_view text, std::size_t at) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  auto c = byte(0);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || text.size() - at < n) return 0;
  // The second byte's range depends on the lead (Unicode Table 3-7); the others are plain continuations.
  unsigned char low = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  unsigned char high = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((byte(k) & 0xC0) != 0x80) return 0;
  return n;
}

// text as well-formed UTF-8 of at most max_bytes: each byte that starts no well-formed sequence becomes U+FFFD,
// control characters (C0 and DEL) become a space when printable_only, and the cut falls between code points
// (never inside one, so a 4-byte emoji is kept whole or not at all).
inline std::string utf8_bounded(std::string_view text, std::size_t max_bytes, bool printable_only = false) {
  static constexpr std::string_view replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  for (std::size_t i = 0; i < text.size();) {
    auto n = utf8_sequence_bytes(text, i);
    std::string_view piece = n == 0 ? replacement : text.substr(i, n);
    auto c = static_cast<unsigned char>(text[i]);
    if (printable_only && n == 1 && (c < 0x20 || c == 0x7F)) piece = " ";
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    i += n == 0 ? 1 : n;
  }
  return out;
}

// A display field of an emit or a binding (a sender's name, a chat's title): printable, within the host's bound.
inline std::string emit_display_field(std::string_view text) {
  return utf8_bounded(text, emit_field_max_bytes, true);
}

}  // namespace xconn::kit
