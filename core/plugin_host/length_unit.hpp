// The unit a plugin's chat.max_length counts in (docs/plugin-api.md, "chat"): the one its target really limits, so the
// host checks, and the served skill states, the same bound the plugin splits or refuses at.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace xconn {

enum class length_unit {
  characters,   // Unicode code points: seed 002's unit, and the default
  bytes,        // UTF-8 bytes (IRC's line limit)
  utf16_units,  // UTF-16 code units (Telegram's 4,096)
};

// The manifest's word for a unit ("characters", "bytes", "utf16_units"), and back.
inline std::string_view manifest_word(length_unit u) {
  switch (u) {
    case length_unit::bytes: return "bytes";
    case length_unit::utf16_units: return "utf16_units";
    case length_unit::characters: break;
  }
  return "characters";
}
inline std::optional<length_unit> length_unit_named(std::string_view word) {
  for (auto u : {length_unit::characters, length_unit::bytes, length_unit::utf16_units})
    if (manifest_word(u) == word) return u;
  return std::nullopt;
}

// How the served skill and the host's refusals say it.
inline std::string_view spoken(length_unit u) {
  return u == length_unit::utf16_units ? "UTF-16 code units" : manifest_word(u);
}

// The length of utf8 in unit. Invalid UTF-8 is not rejected: each byte that is no continuation byte (10xxxxxx)
// counts as a code point, and a 4-byte sequence whole as two UTF-16 units. Never more than utf8.size(), so a text of
// at most N bytes is within N in every unit.
inline std::size_t length_in(length_unit u, std::string_view utf8) {
  auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  if (u == length_unit::bytes) return utf8.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    if (continuation(utf8[i])) continue;
    ++n;
    // Outside the BMP: a surrogate pair. Only a whole sequence, so the count stays within the bytes.
    if (u == length_unit::utf16_units && (static_cast<unsigned char>(utf8[i]) & 0xF8) == 0xF0 && i + 3 < utf8.size() &&
        continuation(utf8[i + 1]) && continuation(utf8[i + 2]) && continuation(utf8[i + 3]))
      ++n;
  }
  return n;
}

}  // namespace xconn
