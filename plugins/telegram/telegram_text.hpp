// Text rules of the Telegram target (docs/adapters.md "telegram"): message parts of at most 4,096 UTF-16 code units,
// the masked chat id of an account hint, a sender's display name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace telegram {

// Telegram's one bound on a message, in UTF-16 code units (an emoji outside the BMP counts as two): what the manifest
// declares (chat.max_length 4096, chat.length_unit utf16_units), what the skill and the tool tell the model, what
// the tool refuses past, and what a long final is split at (telegram_manifest.hpp).
inline constexpr std::size_t max_message_units = 4096;
inline constexpr std::size_t max_caption_units = 1024;

// Code points of UTF-8 text.
inline std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// UTF-16 code units of UTF-8 text (a 4-byte sequence is a surrogate pair: 2).
inline std::size_t utf16_units(std::string_view text) {
  std::size_t units = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) units += c >= 0xF0 ? 2 : 1;
  return units;
}

// Parts of at most max_units each, cut only between code points, preferably after a newline, else after a space,
// in the second half of a part. Empty text: no parts.
inline std::vector<std::string> split_text(std::string_view text, std::size_t max_units = max_message_units) {
  std::vector<std::string> parts;
  while (!text.empty()) {
    std::size_t units = 0, cut = 0, newline = 0, space = 0;
    for (std::size_t i = 0; i < text.size();) {
      auto c = static_cast<unsigned char>(text[i]);
      std::size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      std::size_t add = len == 4 ? 2 : 1;
      if (units + add > max_units) break;
      units += add;
      i = std::min(text.size(), i + len);
      cut = i;
      if (units > max_units / 2) {
        if (c == '\n') newline = i;
        else if (c == ' ') space = i;
      }
    }
    if (cut < text.size()) cut = newline ? newline : space ? space : cut;
    parts.emplace_back(text.substr(0, cut));
    text.remove_prefix(cut);
  }
  return parts;
}

// "12******89": every digit but the first two and the last two as '*' (a sign stays).
inline std::string masked_chat_id(std::string_view id) {
  std::size_t digits = 0;
  for (char c : id) digits += c >= '0' && c <= '9';
  std::string out;
  std::size_t seen = 0;
  for (char c : id) {
    if (c < '0' || c > '9') {
      out += c;
      continue;
    }
    ++seen;
    out += seen <= 2 || seen + 2 > digits ? c : '*';
  }
  return out;
}

// First and last name joined by a space, else the username, else "".
inline std::string display_name(std::string_view first, std::string_view last, std::string_view username) {
  std::string name(first);
  if (!last.empty()) name += (name.empty() ? "" : " ") + std::string(last);
  return name.empty() ? std::string(username) : name;
}

}  // namespace telegram
