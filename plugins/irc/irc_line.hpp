// One IRC protocol line (RFC 1459 §2.3.1, RFC 2812 §2.3.1) with IRCv3 message tags: parsed from what a server
// sends, built for what the plugin sends. Parsing never throws and accepts any bytes: a line it cannot read is
// nullopt, and nothing in it is trusted further than its fields.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irc {

struct line {
  std::map<std::string, std::string> tags;  // IRCv3 tags, values unescaped ("" for a tag without a value)
  std::string source;                       // the prefix without ':' ("nick!user@host" or a server name)
  std::string command;                      // upper-cased: "PRIVMSG", "001", ...
  std::vector<std::string> params;          // the trailing one included, without its ':'

  // The nick of the source ("" for none).
  std::string nick() const { return source.substr(0, source.find_first_of("!@")); }
  const std::string& param(std::size_t i) const {
    static const std::string none;
    return i < params.size() ? params[i] : none;
  }
};

// The value of an IRCv3 tag as sent: "\:" ';', "\s" ' ', "\\" '\', "\r" CR, "\n" LF; another escaped character is
// itself; a trailing lone '\' is dropped.
inline std::string unescape_tag_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '\\') {
      out += v[i];
      continue;
    }
    if (++i == v.size()) break;
    switch (v[i]) {
      case ':': out += ';'; break;
      case 's': out += ' '; break;
      case 'r': out += '\r'; break;
      case 'n': out += '\n'; break;
      default: out += v[i];
    }
  }
  return out;
}

// A line as read (without its CR LF). nullopt for an empty line, one without a command, or one with a NUL.
inline std::optional<line> parse_line(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  line l;
  auto word = [&text]() {
    auto end = text.find(' ');
    auto w = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    while (text.starts_with(' ')) text.remove_prefix(1);
    return w;
  };
  if (text.starts_with('@')) {
    auto tags = word().substr(1);
    while (!tags.empty()) {
      auto end = tags.find(';');
      auto tag = tags.substr(0, end);
      tags = end == std::string_view::npos ? std::string_view() : tags.substr(end + 1);
      if (tag.empty()) continue;
      auto eq = tag.find('=');
      l.tags[std::string(tag.substr(0, eq))] =
          eq == std::string_view::npos ? std::string() : unescape_tag_value(tag.substr(eq + 1));
    }
  }
  if (text.starts_with(':')) l.source = std::string(word().substr(1));
  auto command = word();
  if (command.empty()) return std::nullopt;
  for (char c : command) l.command += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c;
  while (!text.empty()) {
    if (text.starts_with(':')) {
      l.params.emplace_back(text.substr(1));
      break;
    }
    l.params.emplace_back(word());
  }
  return l;
}

// "COMMAND a b :last words": the last parameter is always sent as trailing. No parameter may hold CR, LF or NUL
// (the caller checks what came from outside); only the last may hold a space or start with ':'.
inline std::string build_line(std::string_view command, const std::vector<std::string>& params) {
  std::string out(command);
  for (std::size_t i = 0; i < params.size(); ++i) {
    out += i + 1 == params.size() ? " :" : " ";
    out += params[i];
  }
  return out + "\r\n";
}

// Whether s may go into a line: no CR, LF or NUL.
inline bool line_safe(std::string_view s) { return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos; }

// A channel name as the target field may give it (RFC 2812 §1.3 with the common prefixes).
inline bool is_channel(std::string_view target) {
  return !target.empty() && (target[0] == '#' || target[0] == '&' || target[0] == '+' || target[0] == '!');
}

// Case-folded for comparing names (CASEMAPPING=ascii, which ngircd announces; rfc1459's []\~ folding differs only
// in four punctuation characters nicks and channels rarely use).
inline std::string fold(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

}  // namespace irc
