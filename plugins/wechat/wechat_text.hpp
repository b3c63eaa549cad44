// A final's text as WeChat messages: iLink documents no length limit, so parts are kept to 4,000 Unicode code
// points, cut where a reader would (a paragraph, a line, a word) before falling back to any code point.
#pragma once

#include "kit/utf8_bound.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wechat {

inline constexpr std::size_t max_part_code_points = 4000;

namespace detail {

inline bool is_cut_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Byte offset after `count` code points of text (its size when it has fewer); a byte that starts no well-formed
// sequence is one code point of its own, so no byte is ever skipped.
inline std::size_t after_code_points(std::string_view text, std::size_t count) {
  std::size_t at = 0;
  for (std::size_t k = 0; k < count && at < text.size(); ++k) {
    auto n = xconn::kit::utf8_sequence_bytes(text, at);
    at += n == 0 ? 1 : n;
  }
  return at;
}

// Where to cut a window of text: the last paragraph break, else line break, else space at or after `half`;
// else the window's end.
inline std::size_t cut_at(std::string_view window, std::size_t half) {
  for (std::string_view mark : {"\n\n", "\n", " "}) {
    auto p = window.rfind(mark);
    if (p != std::string_view::npos && p >= half) return p;
  }
  return window.size();
}

}  // namespace detail

// utf8 in parts of at most max_code_points code points (at least 1), none empty; whitespace at a cut is dropped,
// every other byte is kept in order (invalid UTF-8 bytes too, one code point each). "" gives no part.
inline std::vector<std::string> split_text(std::string_view utf8, std::size_t max_code_points = max_part_code_points) {
  if (max_code_points == 0) max_code_points = 1;
  std::vector<std::string> parts;
  std::string_view rest = utf8;
  while (!rest.empty()) {
    auto end = detail::after_code_points(rest, max_code_points);
    if (end == rest.size()) {
      parts.emplace_back(rest);
      break;
    }
    // The break must fall in the part's second half (at least one code point in), or the part would be short.
    auto half = detail::after_code_points(rest, max_code_points / 2 == 0 ? 1 : max_code_points / 2);
    auto cut = detail::cut_at(rest.substr(0, end), half);
    auto part = rest.substr(0, cut);
    while (!part.empty() && detail::is_cut_space(part.back())) part.remove_suffix(1);
    if (!part.empty()) parts.emplace_back(part);
    rest.remove_prefix(cut);
    while (!rest.empty() && detail::is_cut_space(rest.front())) rest.remove_prefix(1);
  }
  return parts;
}

}  // namespace wechat
