#include "core/wire/json_append.hpp"

#include <boost/json/serializer.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace xconn {
namespace {

// Whether s holds a byte below 0x20, a quote or a backslash: eight bytes a step (the "has a byte less than n" and
// "has a zero byte" word tricks, exact for whether any byte matches).
bool needs_escaping(std::string_view s) {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  auto any_below = [](std::uint64_t w, std::uint64_t n) { return (w - ones * n) & ~w & highs; };
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (any_below(w, 0x20) | any_below(w ^ (ones * '"'), 1) | any_below(w ^ (ones * '\\'), 1)) return true;
  }
  for (; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == '"' || c == '\\') return true;
  }
  return false;
}

template <typename Value>
void serialize_into(std::string& out, const Value& v) {
  boost::json::serializer sr;
  sr.reset(&v);
  while (!sr.done()) {
    auto at = out.size();
    auto room = std::max<std::size_t>(out.capacity() - at, 256);
    out.resize(at + room);
    out.resize(at + sr.read(out.data() + at, room).size());
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  if (!needs_escaping(s)) {  // ids and types never do
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t plain = 0;  // the start of the run not yet copied
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s, plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0xf]);
    }
  }
  out.append(s, plain);
  out.push_back('"');
}

void append_json_member(std::string& out, std::string_view key, std::string_view value) {
  out.push_back(',');
  append_json_string(out, key);
  out.push_back(':');
  append_json_string(out, value);
}

void append_json_value(std::string& out, const boost::json::object& o) { serialize_into(out, o); }
void append_json_value(std::string& out, const boost::json::array& a) { serialize_into(out, a); }

}  // namespace xconn
