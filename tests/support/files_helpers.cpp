#include "support/files_helpers.hpp"

#include "support/data_plane.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <regex>
#include <sstream>

namespace xconn::test {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string sha256::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_, md.data(), &len);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

std::string sha256_of(std::string_view data) {
  sha256 h;
  h.update(data);
  return h.hex();
}

void byte_source::fill(char* p, std::size_t n) {
  while (n >= 8) {
    auto v = next();
    std::memcpy(p, &v, 8);
    p += 8;
    n -= 8;
  }
  if (n) {
    auto v = next();
    std::memcpy(p, &v, n);
  }
}

std::string byte_source::bytes(std::size_t n) {
  std::string s(n, '\0');
  fill(s.data(), n);
  return s;
}

std::uint64_t byte_source::next() {
  s_ ^= s_ >> 12;
  s_ ^= s_ << 25;
  s_ ^= s_ >> 27;
  return s_ * 2685821657736338717ull;
}

std::string random_bytes(std::size_t n) {
  static std::mt19937_64 seeds(std::random_device{}());
  return byte_source(seeds()).bytes(n);
}

std::string base64(std::string_view in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    auto v = (std::uint32_t(std::uint8_t(in[i])) << 16) | (std::uint32_t(std::uint8_t(in[i + 1])) << 8) |
             std::uint8_t(in[i + 2]);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    auto v = std::uint32_t(std::uint8_t(in[i])) << 16;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    auto v = (std::uint32_t(std::uint8_t(in[i])) << 16) | (std::uint32_t(std::uint8_t(in[i + 1])) << 8);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool is_lower_hex(std::string_view s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}
bool is_file_ref(const std::string& s) { return s.starts_with("file_") && is_lower_hex(std::string_view(s).substr(5), 32); }

std::string png_bytes(std::size_t n) {
  std::string s = "\x89PNG\r\n\x1a\n";
  return s + random_bytes(n > s.size() ? n - s.size() : 0);
}

form_part file_part(std::string data, std::string filename, std::optional<std::string> content_type) {
  return {"file", std::move(filename), std::move(content_type), std::move(data), ""};
}
form_part field(std::string name, std::string value) { return {std::move(name), std::nullopt, std::nullopt, std::move(value), ""}; }

std::string part_head(const form_part& p, const std::string& b) {
  std::string s = "--" + b + "\r\nContent-Disposition: form-data; name=\"" + p.name + "\"";
  if (p.filename) s += "; filename=\"" + *p.filename + "\"";
  s += "\r\n";
  if (p.content_type) s += "Content-Type: " + *p.content_type + "\r\n";
  s += p.extra_headers + "\r\n";
  return s;
}
std::string closing(const std::string& b) { return "\r\n--" + b + "--\r\n"; }

std::string multipart(const std::vector<form_part>& parts, bool close, const std::string& b) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) s += "\r\n";
    s += part_head(parts[i], b) + parts[i].data;
  }
  if (close) s += closing(b);
  return s;
}
std::string multipart_type(const std::string& b) { return "multipart/form-data; boundary=" + b; }

signed_url parse_url(const std::string& url) {
  static const std::regex shape(R"(^(http://[^/?#]+)(/[^?#]*)\?([^#]*)$)");
  signed_url u;
  std::smatch m;
  if (!std::regex_match(url, m, shape)) return u;
  u.origin = m[1];
  u.path = m[2];
  if (auto slash = u.path.rfind('/'); slash != std::string::npos) u.ref = u.path.substr(slash + 1);
  std::stringstream q(m[3]);
  std::string kv;
  while (std::getline(q, kv, '&')) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    if (kv.substr(0, eq) == "exp") u.exp = kv.substr(eq + 1);
    if (kv.substr(0, eq) == "sig") u.sig = kv.substr(eq + 1);
  }
  u.ok = !u.exp.empty() && !u.sig.empty();
  return u;
}

// One hex digit of s changed (the last one).
std::string tamper(std::string s) {
  if (!s.empty()) s.back() = s.back() == '0' ? '1' : '0';
  return s;
}

std::string jstr(const json::object& o, const char* key) { return text_of(o, key); }
std::int64_t jint(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (!v) return -1;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
  return -1;
}
std::string error_of(const http_reply& r) {
  auto v = r.json();
  if (!v.is_object()) return "";
  auto* e = v.as_object().if_contains("error");
  if (!e || !e->is_object()) return "";
  return text_of(e->as_object(), "code");
}

streamed_upload stream_upload(unsigned short port, const std::map<std::string, std::string>& auth_and_channel,
                              const std::string& filename, std::uint64_t file_size, bool chunked,
                              const std::function<void(char*, std::size_t)>& gen,
                              std::chrono::milliseconds deadline) {
  streamed_upload out;
  auto until = steady::now() + deadline;
  auto left = [&] { return std::max(1ms, std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now())); };
  auto c = raw_http::connect(port);
  if (!c) return out;
  auto head = part_head(file_part("", filename));
  auto tail = closing();
  auto headers = auth_and_channel;
  headers["Content-Type"] = multipart_type();
  if (chunked)
    headers["Transfer-Encoding"] = "chunked";
  else
    headers["Content-Length"] = std::to_string(head.size() + file_size + tail.size());
  auto frame = [&](std::string_view bytes) -> bool {
    if (!chunked) return c->send(bytes, left());
    std::ostringstream size;
    size << std::hex << bytes.size() << "\r\n";
    return c->send(size.str(), left()) && c->send(bytes, left()) && c->send("\r\n", left());
  };
  bool ok = c->send(request_head("POST", uploads, headers), left()) && frame(head);
  std::string piece(1024 * 1024, '\0');
  while (ok && out.file_bytes_sent < file_size && steady::now() < until) {
    auto n = static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), file_size - out.file_bytes_sent));
    gen(piece.data(), n);
    ok = frame(std::string_view(piece).substr(0, n));
    if (ok) out.file_bytes_sent += n;
    if (c->readable(0ms)) {
      out.answered_early = out.file_bytes_sent < file_size;
      break;
    }
  }
  if (ok && out.file_bytes_sent == file_size) {
    ok = frame(tail);
    if (ok && chunked) c->send("0\r\n\r\n", left());
  }
  for (;;) {
    out.response = c->read_response(left());
    if (!out.response || out.response->status >= 200) break;
  }
  return out;
}

}  // namespace xconn::test
