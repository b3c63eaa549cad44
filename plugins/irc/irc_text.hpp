// A final's text as PRIVMSG bodies (docs/adapters.md "irc"): split at newlines (blank lines dropped), then so that each
// body is at most max_bytes, on UTF-8 boundaries, preferring to break at a space (that one space is dropped: the
// bodies of one line joined with a space give the line back). CR and NUL, which a line cannot carry, are dropped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irc {

inline constexpr std::size_t max_body_bytes = 400;

namespace detail {

inline bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

inline void split_line(std::string_view line, std::size_t max_bytes, std::vector<std::string>& out) {
  while (line.size() > max_bytes) {
    std::size_t cut = max_bytes;  // the first byte of what follows; never inside a code point
    while (cut > 0 && continuation_byte(line[cut])) --cut;
    if (cut == 0) cut = max_bytes;  // not UTF-8 at all: cut by bytes rather than loop
    auto space = line.rfind(' ', cut);
    if (space != std::string_view::npos && space > 0) {
      out.emplace_back(line.substr(0, space));
      line.remove_prefix(space + 1);
    } else {
      out.emplace_back(line.substr(0, cut));
      line.remove_prefix(cut);
    }
  }
  if (!line.empty()) out.emplace_back(line);
}

}  // namespace detail

inline std::vector<std::string> split_message(std::string_view text, std::size_t max_bytes = max_body_bytes) {
  std::vector<std::string> out;
  std::string clean;
  for (char c : text)
    if (c != '\r' && c != '\0') clean += c;
  std::string_view rest(clean);
  for (;;) {
    auto newline = rest.find('\n');
    detail::split_line(rest.substr(0, newline), max_bytes, out);
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  return out;
}

// Text as valid UTF-8: IRC has no declared encoding and older clients send Latin-1, so every byte that does not
// start a well-formed UTF-8 sequence (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF)
// becomes U+FFFD. Control characters become U+FFFD too when printable_only is set (a nick, a tag, a key).
inline std::string to_valid_utf8(std::string_view in, bool printable_only = false) {
  static constexpr std::string_view replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    auto c = static_cast<unsigned char>(in[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= in.size();
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(in[i + k]) & 0xC0) == 0x80;
    if (ok && n > 1) {
      auto b1 = static_cast<unsigned char>(in[i + 1]);
      ok = !(n == 2 && c < 0xC2) && !(n == 3 && c == 0xE0 && b1 < 0xA0) && !(n == 3 && c == 0xED && b1 >= 0xA0) &&
           !(n == 4 && c == 0xF0 && b1 < 0x90) && !(n == 4 && (c > 0xF4 || (c == 0xF4 && b1 >= 0x90)));
    }
    if (ok && n == 1 && printable_only && (c < 0x20 || c == 0x7F)) ok = false;
    if (!ok) {
      out += replacement;
      ++i;
      continue;
    }
    out.append(in.substr(i, n));
    i += n;
  }
  return out;
}

// What a PRIVMSG body says as a message: CTCP ACTION becomes "* <nick> <text>"; another CTCP request is no message
// (nullopt), nor is an empty body.
inline std::optional<std::string> message_text(std::string_view body, std::string_view nick) {
  if (body.empty()) return std::nullopt;
  if (body.front() != '\x01') return std::string(body);
  body.remove_prefix(1);
  if (!body.empty() && body.back() == '\x01') body.remove_suffix(1);
  if (!body.starts_with("ACTION")) return std::nullopt;
  body.remove_prefix(6);
  if (body.starts_with(' ')) body.remove_prefix(1);
  return "* " + std::string(nick) + " " + std::string(body);
}

}  // namespace irc
