// Strict UTF-8 decoding, enough to reverse text by code point.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace echo {

// text with its code points in reverse order; nothing when text is not well-formed UTF-8 (truncated or
// overlong sequences, surrogates and values past U+10FFFF are refused).
inline std::optional<std::string> reverse_code_points(std::string_view text) {
  static constexpr char32_t smallest_of_length[] = {0, 0, 0x80, 0x800, 0x10000};
  std::string out(text.size(), '\0');
  size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80 ? 1
                    : (lead & 0xE0) == 0xC0 ? 2
                    : (lead & 0xF0) == 0xE0 ? 3
                    : (lead & 0xF8) == 0xF0 ? 4
                                            : 0;
    if (length == 0 || text.size() - i < length) return std::nullopt;
    char32_t point = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return std::nullopt;
      point = (point << 6) | (next & 0x3F);
    }
    if (point < smallest_of_length[length] || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF)) {
      return std::nullopt;
    }
    std::memcpy(out.data() + (text.size() - i - length), text.data() + i, length);
    i += length;
  }
  return out;
}

}  // namespace echo
