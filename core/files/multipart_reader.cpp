#include "core/files/multipart_reader.hpp"

#include <algorithm>
#include <utility>

namespace xconn {

namespace {

constexpr std::size_t npos = std::string_view::npos;

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return lower(x) == lower(y);
         });
}

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 9110 tchar: what header names and parameter names are made of.
bool is_tchar(char c) { return is_alnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != npos; }

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

// RFC 2046 bchars. None of them is CR, so a delimiter ("\r\n--" boundary) can only begin at a CR: the data scan
// relies on that.
bool valid_boundary(std::string_view b) {
  auto bchar = [](char c) { return is_alnum(c) || std::string_view("'()+_,-./:=? ").find(c) != npos; };
  return !b.empty() && b.size() <= 70 && b.back() != ' ' && std::all_of(b.begin(), b.end(), bchar);
}

// Calls on(name, value) for each `; name=value` in s (value a token or a quoted-string). False on bad syntax or
// when on returns false. In a quoted-string only \" and \\ are escapes: browsers send Windows paths with bare
// backslashes, which are kept as they are.
template <class F>
bool for_each_parameter(std::string_view s, F&& on) {
  std::size_t i = 0;
  auto skip_ows = [&] {
    while (i < s.size() && is_ows(s[i])) ++i;
  };
  for (;;) {
    skip_ows();
    if (i == s.size()) return true;
    if (s[i] != ';') return false;
    ++i;
    skip_ows();
    if (i == s.size()) return true;  // a trailing ';' is harmless
    std::size_t name_start = i;
    while (i < s.size() && is_tchar(s[i])) ++i;
    std::string_view name = s.substr(name_start, i - name_start);
    skip_ows();
    if (name.empty() || i == s.size() || s[i] != '=') return false;
    ++i;
    skip_ows();
    std::string value;
    if (i < s.size() && s[i] == '"') {
      ++i;
      for (;;) {
        if (i == s.size()) return false;  // unterminated
        char c = s[i++];
        if (c == '"') break;
        if (c == '\\' && i < s.size() && (s[i] == '"' || s[i] == '\\')) c = s[i++];
        value += c;
      }
    } else {
      std::size_t value_start = i;
      while (i < s.size() && s[i] != ';' && s[i] != '"' && !is_ows(s[i])) ++i;
      value = s.substr(value_start, i - value_start);
      if (value.empty()) return false;
    }
    if (!on(name, std::move(value))) return false;
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// An RFC 5987 ext-value (charset'language'percent-encoded). Only UTF-8 is accepted; the decoded name may not
// hold control characters, which a plain header value could not carry either. Bytes are not checked further.
std::optional<std::string> decode_ext_value(std::string_view v) {
  auto first = v.find('\'');
  if (first == npos) return std::nullopt;
  auto second = v.find('\'', first + 1);
  if (second == npos || !iequals(v.substr(0, first), "utf-8")) return std::nullopt;
  std::string_view encoded = v.substr(second + 1);
  std::string out;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    char c = encoded[i];
    if (c == '%') {
      if (i + 2 >= encoded.size()) return std::nullopt;  // a cut-off escape
      int hi = hex_value(encoded[i + 1]);
      int lo = hex_value(encoded[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return std::nullopt;
    out += c;
  }
  return out;
}

// Content-Disposition: form-data; name=...; filename=...; filename*=... Returns "" or what was wrong.
std::string parse_disposition(std::string_view value, multipart_reader::part_head& head) {
  auto semi = value.find(';');
  if (!iequals(trim(value.substr(0, semi)), "form-data")) return "a part's Content-Disposition is not form-data";
  std::optional<std::string> name, filename, filename_ext;
  std::string why;
  bool ok = for_each_parameter(semi == npos ? std::string_view() : value.substr(semi),
                               [&](std::string_view key, std::string v) {
                                 std::optional<std::string>* slot = nullptr;
                                 if (iequals(key, "name")) slot = &name;
                                 else if (iequals(key, "filename")) slot = &filename;
                                 else if (iequals(key, "filename*")) slot = &filename_ext;
                                 if (slot == nullptr) return true;  // other parameters do not matter here
                                 if (*slot) {
                                   why = "a part's Content-Disposition repeats a parameter";
                                   return false;
                                 }
                                 *slot = std::move(v);
                                 return true;
                               });
  if (!ok) return why.empty() ? "a part's Content-Disposition is malformed" : why;
  if (!name) return "a part's Content-Disposition has no name";
  head.name = std::move(*name);
  if (filename_ext) {
    auto decoded = decode_ext_value(*filename_ext);
    if (!decoded) return "a part's filename* is not valid UTF-8'' percent-encoding";
    head.filename = std::move(*decoded);
    head.has_filename = true;
  } else if (filename) {
    head.filename = std::move(*filename);
    head.has_filename = true;
  }
  return {};
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view content_type) {
  auto semi = content_type.find(';');
  if (!iequals(trim(content_type.substr(0, semi)), "multipart/form-data") || semi == npos) return std::nullopt;
  std::optional<std::string> boundary;
  bool ok = for_each_parameter(content_type.substr(semi), [&](std::string_view name, std::string value) {
    if (!iequals(name, "boundary")) return true;
    if (boundary) return false;  // two boundaries: which one the sender meant is unknowable
    boundary = std::move(value);
    return true;
  });
  if (!ok || !boundary || !valid_boundary(*boundary)) return std::nullopt;
  return boundary;
}

multipart_reader::multipart_reader(std::string boundary, callbacks cb, limits lim)
    : delimiter_("\r\n--" + boundary), cb_(std::move(cb)), limits_(lim) {
  if (!valid_boundary(boundary)) {
    fail("the multipart boundary is invalid");
    return;
  }
  // The body is read as if a CRLF preceded it, so a first delimiter at its very start is found like any other.
  // Those two bytes count against the preamble budget when no delimiter follows them, hence the + 2.
  held_ = "\r\n";
  preamble_budget_ = limits_.max_header_bytes + held_.size();
}

multipart_reader::status multipart_reader::feed(std::string_view bytes) noexcept {
  if (state_ == state::epilogue || state_ == state::stopped || state_ == state::failed) return current();
  try {
    if (!bytes.empty()) fed_ = true;
    while (!bytes.empty()) {
      switch (state_) {
        case state::preamble:
        case state::body: scan(bytes); break;
        case state::delimiter_line:
        case state::close_dash:
        case state::delimiter_lf: read_delimiter_line(bytes); break;
        case state::headers: read_headers(bytes); break;
        case state::epilogue:
        case state::stopped:
        case state::failed: return current();
      }
    }
  } catch (...) {
    fail("reading the multipart body failed (out of memory or a callback threw)");
  }
  return current();
}

multipart_reader::status multipart_reader::finish() noexcept {
  switch (state_) {
    case state::preamble: fail(fed_ ? "the body has no multipart delimiter" : "the body is empty"); break;
    case state::delimiter_line:
    case state::close_dash:
    case state::delimiter_lf: fail("the body ended inside a delimiter line"); break;
    case state::headers: fail("the body ended inside a part's headers"); break;
    case state::body: fail("the body ended inside a part"); break;
    case state::epilogue:
    case state::stopped:
    case state::failed: break;
  }
  return current();
}

multipart_reader::status multipart_reader::current() const {
  switch (state_) {
    case state::epilogue: return status::done;
    case state::stopped: return status::stopped;
    case state::failed: return status::error;
    default: return status::need_more;
  }
}

void multipart_reader::fail(std::string why) noexcept {
  state_ = state::failed;
  error_ = std::move(why);
}

// Preamble or part data up to the next delimiter. Consumes all of `in` unless a delimiter ends in it.
void multipart_reader::scan(std::string_view& in) {
  // First settle what the last feed held back: it is either the start of a delimiter or plain data.
  if (!held_.empty()) {
    std::string_view rest = std::string_view(delimiter_).substr(held_.size());
    std::size_t n = std::min(rest.size(), in.size());
    if (in.substr(0, n) == rest.substr(0, n)) {
      if (n < rest.size()) {  // still only a prefix
        held_.append(in);
        in = {};
        return;
      }
      held_.clear();
      in.remove_prefix(n);
      at_delimiter();
      return;
    }
    // Not a delimiter. No other one can begin inside held_: it holds a CR only at its start.
    bool go_on = pass(held_);
    held_.clear();
    if (!go_on) return;
  }

  // The first CR that begins a whole delimiter, or a prefix of one that runs to the end of `in`.
  std::size_t at = npos;
  for (std::size_t from = 0; (at = in.find('\r', from)) != npos; from = at + 1) {  // memchr underneath
    std::size_t n = std::min(delimiter_.size(), in.size() - at);
    if (in.compare(at, n, delimiter_, 0, n) == 0) break;
  }
  if (at == npos) {
    pass(in);
    in = {};
    return;
  }
  if (!pass(in.substr(0, at))) return;
  in.remove_prefix(at);
  if (in.size() < delimiter_.size()) {
    held_.assign(in);
    in = {};
    return;
  }
  in.remove_prefix(delimiter_.size());
  at_delimiter();
}

// Bytes before a delimiter: the current part's data, or preamble to drop (within its budget).
bool multipart_reader::pass(std::string_view data) {
  if (data.empty()) return true;
  if (state_ == state::preamble) {
    if (data.size() > preamble_budget_) {
      fail("no multipart delimiter within " + std::to_string(limits_.max_header_bytes) + " bytes");
      return false;
    }
    preamble_budget_ -= data.size();
    return true;
  }
  if (cb_.on_data && !cb_.on_data(data)) {
    state_ = state::stopped;
    return false;
  }
  return true;
}

void multipart_reader::at_delimiter() {
  if (state_ == state::body && cb_.on_part_end && !cb_.on_part_end()) {
    state_ = state::stopped;
    return;
  }
  state_ = state::delimiter_line;
  padding_ = 0;
}

// What follows "--boundary": "--" (the close delimiter), or optional spaces/tabs and CRLF. Only a few bytes, so
// they are taken one at a time.
void multipart_reader::read_delimiter_line(std::string_view& in) {
  while (!in.empty()) {
    char c = in.front();
    in.remove_prefix(1);
    switch (state_) {
      case state::delimiter_line:
        if (c == '-' && padding_ == 0) {
          state_ = state::close_dash;
        } else if (is_ows(c)) {
          if (++padding_ > limits_.max_header_bytes) return fail("too much padding after a multipart delimiter");
        } else if (c == '\r') {
          state_ = state::delimiter_lf;
        } else {
          // The boundary must not occur in a part (RFC 2046 §5.1.1), so this is not data either.
          return fail("a multipart delimiter is followed by other bytes");
        }
        break;
      case state::close_dash:
        if (c != '-') return fail("a multipart delimiter is followed by other bytes");
        state_ = state::epilogue;  // whatever follows is the epilogue
        in = {};
        return;
      case state::delimiter_lf:
        if (c != '\n') return fail("a multipart delimiter line does not end in CRLF");
        return start_part();
      default: return;
    }
  }
}

void multipart_reader::start_part() {
  if (parts_ >= limits_.max_parts) return fail("more than " + std::to_string(limits_.max_parts) + " parts");
  state_ = state::headers;
  header_bytes_ = 0;
  line_.clear();
  disposition_.reset();
  content_type_.reset();
  head_ = {};
}

// Header lines are gathered whole (one LF search per line), never more than max_header_bytes in all.
void multipart_reader::read_headers(std::string_view& in) {
  while (!in.empty() && state_ == state::headers) {
    auto lf = in.find('\n');
    std::size_t take = lf == npos ? in.size() : lf + 1;
    if (take > limits_.max_header_bytes - header_bytes_) {
      return fail("a part's headers exceed " + std::to_string(limits_.max_header_bytes) + " bytes");
    }
    header_bytes_ += take;
    line_.append(in.substr(0, take));
    in.remove_prefix(take);
    if (lf != npos) header_line();
  }
}

// line_ holds one line up to its LF.
void multipart_reader::header_line() {
  std::string_view line = line_;
  if (line.size() < 2 || line[line.size() - 2] != '\r') return fail("a part's header line does not end in CRLF");
  line.remove_suffix(2);
  if (line.empty()) return end_headers();
  if (is_ows(line.front())) return fail("a part's headers use obsolete line folding");
  auto colon = line.find(':');
  if (colon == npos) return fail("a part's header line has no colon");
  if (!is_token(line.substr(0, colon))) return fail("a part's header name is invalid");
  std::string_view name = line.substr(0, colon);
  std::string_view value = line.substr(colon + 1);
  // Bytes from 0x80 up pass (browsers send UTF-8 filenames raw); control characters other than tab do not.
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7F) return fail("a part's header holds a control character");
  }
  value = trim(value);
  std::optional<std::string>* slot = nullptr;
  if (iequals(name, "content-disposition")) slot = &disposition_;
  else if (iequals(name, "content-type")) slot = &content_type_;
  if (slot != nullptr) {
    // Two of them would leave open which one names the part.
    if (*slot) return fail("a part repeats a header");
    *slot = std::string(value);
  }
  line_.clear();
}

void multipart_reader::end_headers() {
  if (!disposition_) return fail("a part has no Content-Disposition");
  if (auto why = parse_disposition(*disposition_, head_); !why.empty()) return fail(std::move(why));
  if (content_type_) head_.content_type = std::move(*content_type_);
  ++parts_;
  state_ = state::body;
  line_.clear();
  if (cb_.on_part && !cb_.on_part(head_)) state_ = state::stopped;
}

}  // namespace xconn
