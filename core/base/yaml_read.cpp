#include "core/base/yaml_read.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <set>
#include <sstream>

namespace xconn::yaml_read {
namespace {

constexpr int max_depth = 32;
constexpr std::size_t max_nodes = 100000;

}  // namespace



// Keys come from the document: keep messages one printable line of bounded size.
std::string printable(std::string_view key) {
  std::size_t cut = std::min<std::size_t>(key.size(), 200);
  while (cut < key.size() && cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xc0) == 0x80) --cut;  // whole UTF-8 chars
  std::string out;
  for (unsigned char c : key.substr(0, cut)) out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  if (cut < key.size()) out += "...";
  return out;
}

void fail(const std::string& key, int line, std::string message) {
  throw failure{printable(key), line, std::move(message)};
}

int line_of(const YAML::Mark& mark) { return mark.line < 0 ? 0 : mark.line + 1; }
int line_of(const YAML::Node& node) { return line_of(node.Mark()); }

// Refuses bytes yaml-cpp would pass through silently: C0 controls (other than tab/CR/LF), DEL, invalid UTF-8.
void check_bytes(std::string_view text) {
  int line = 1;
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') ++line;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) fail("", line, "control character in document");
      ++i;
      continue;
    }
    // Lead byte: length and the smallest code point it may encode (rejects overlong forms).
    std::size_t len = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
    else fail("", line, "invalid UTF-8");
    if (i + len > text.size()) fail("", line, "invalid UTF-8");
    for (std::size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) fail("", line, "invalid UTF-8");
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) fail("", line, "invalid UTF-8");
    i += len;
  }
}

// First pass over the raw event stream, before any tree exists: yaml-cpp shares aliased nodes, so an alias
// bomb is small in memory but exponential to walk. Refusing anchors outright is simpler than bounding them.
namespace {

class guard_handler : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start_line = line_of(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { node(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { fail("", line_of(mark), "aliases are not allowed"); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    node(mark, anchor);
    if (value.size() > max_scalar_bytes) fail("", line_of(mark), "scalar longer than 64 KiB");
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { --depth_; }
  void OnAnchor(const YAML::Mark& mark, const std::string&) override { fail("", line_of(mark), "anchors are not allowed"); }

  int start_line = 0;

 private:
  void node(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) fail("", line_of(mark), "anchors are not allowed");
    if (++nodes_ > max_nodes) fail("", line_of(mark), "more than 100000 nodes");
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    node(mark, anchor);
    if (++depth_ > max_depth) fail("", line_of(mark), "nested deeper than 32 levels");
  }
  int depth_ = 0;
  std::size_t nodes_ = 0;
};

}  // namespace

void guard_events(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  guard_handler handler;
  if (!parser.HandleNextDocument(handler)) return;  // empty document
  guard_handler rest;
  if (parser.HandleNextDocument(rest)) fail("", rest.start_line, "more than one YAML document");
}

// Replaces every ${NAME} with the environment variable NAME; the result is not scanned again.
std::string expand_env(const std::string& text, const std::string& key, int line) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    auto start = text.find("${", pos);
    if (start == std::string::npos) break;
    auto end = text.find('}', start + 2);
    if (end == std::string::npos) fail(key, line, "unterminated ${ in value");
    std::string name = text.substr(start + 2, end - start - 2);
    bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                 std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!valid) fail(key, line, "invalid environment variable name in ${...}");
    const char* value = std::getenv(name.c_str());
    if (!value) fail(key, line, "environment variable " + name + " is not set");
    out.append(text, pos, start - pos);
    out += value;
    pos = end + 1;
  }
  out.append(text, pos, std::string::npos);
  if (out.size() > max_scalar_bytes) fail(key, line, "value longer than 64 KiB after ${...} expansion");
  return out;
}

// Calls f(key, key_line, value) for each entry of a map; null counts as an empty map.
void for_each_entry(const YAML::Node& map, const std::string& path, int line,
                    const std::function<void(const std::string&, int, const YAML::Node&)>& f) {
  if (map.IsNull()) return;
  if (!map.IsMap()) fail(path, line, "expected a map");
  std::set<std::string> seen;
  for (const auto& entry : map) {
    int key_line = line_of(entry.first);
    if (!entry.first.IsScalar()) fail(path, key_line, "keys must be strings");
    const std::string& key = entry.first.Scalar();
    std::string key_path = path.empty() ? key : path + "." + key;
    if (!seen.insert(key).second) fail(key_path, key_line, "duplicate key");
    f(key, key_line, entry.second);
  }
}

std::string scalar(const YAML::Node& value, const std::string& key, int line, const char* expected) {
  if (!value.IsScalar()) fail(key, line, std::string("expected ") + expected);
  return expand_env(value.Scalar(), key, line);
}

std::int64_t integer(const YAML::Node& value, const std::string& key, int line, std::int64_t lo, std::int64_t hi) {
  std::string text = scalar(value, key, line, "an integer");
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == text.data() + text.size() && (n < lo || n > hi)))
    fail(key, line, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) fail(key, line, "expected an integer");
  return n;
}

bool boolean(const YAML::Node& value, const std::string& key, int line) {
  std::string text = scalar(value, key, line, "true or false");
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  fail(key, line, "expected true or false");
}

std::vector<std::string> string_list(const YAML::Node& value, const std::string& key, int line) {
  std::vector<std::string> out;
  if (value.IsNull()) return out;
  if (!value.IsSequence()) fail(key, line, "expected a sequence");
  for (std::size_t i = 0; i < value.size(); ++i) {
    const YAML::Node item = value[i];
    out.push_back(scalar(item, key + "[" + std::to_string(i) + "]", line_of(item), "a string"));
  }
  return out;
}


void read_section(const YAML::Node& node, const std::string& name, int line,
                  const std::vector<std::pair<std::string, field_reader>>& fields) {
  for_each_entry(node, name, line, [&](const std::string& key, int key_line, const YAML::Node& value) {
    auto it = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == key; });
    if (it == fields.end()) fail(name + "." + key, key_line, "unknown key");
    it->second(value, name + "." + key, key_line);
  });
}

field_reader bool_field(bool& target) {
  return [&target](const YAML::Node& v, const std::string& key, int line) { target = boolean(v, key, line); };
}

field_reader non_empty_string_field(std::string& target) {
  return [&target](const YAML::Node& v, const std::string& key, int line) {
    target = scalar(v, key, line, "a string");
    if (target.empty()) fail(key, line, "must not be empty");
  };
}

}  // namespace xconn::yaml_read
