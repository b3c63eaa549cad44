// The transfer plane on the real server over loopback HTTP: uploads streamed into the store (POST
// {base}/files/uploads), downloads with the key or through a signed URL (GET/HEAD/DELETE {base}/files/refs/{ref}),
// ranges and conditional requests, expiry, hostile input, files riding on inbound chat.message / message.push
// and on outbound finals, durability across a kill -9 of the real daemon, the signature kept out of the log,
// and the daemon's memory while a 100 MiB upload streams through (spec xagent_connector_protocol.md §3, §5;
// profiles/xagent_im_v2.md §5; xagent_im_v1.md §5, §9; protocol.md §1, §4, §5; plugin-contract.md, echo).
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/upload_client.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

const std::string base = "/connectors/echo";
const std::string uploads = base + "/files/uploads";
const std::string boundary = "xconnFilesBoundary7MA4YWxkTrZu0gW";
constexpr std::uint64_t small_max = 1024 * 1024;  // files.max_bytes of FilesSmall
constexpr std::uint64_t header_allowance = 65536;  // what a Content-Length may exceed files.max_bytes by

std::string refs(const std::string& ref) { return base + "/files/refs/" + ref; }

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- digests, bytes, encodings ----

class sha256 {
 public:
  sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~sha256() { EVP_MD_CTX_free(ctx_); }
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;
  void update(std::string_view data) { EVP_DigestUpdate(ctx_, data.data(), data.size()); }
  std::string hex() {
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

 private:
  EVP_MD_CTX* ctx_;
};

std::string sha256_of(std::string_view data) {
  sha256 h;
  h.update(data);
  return h.hex();
}

// A fast deterministic byte source (xorshift64*), so that 100 MiB never has to sit in memory.
class byte_source {
 public:
  explicit byte_source(std::uint64_t seed) : s_(seed | 1) {}
  void fill(char* p, std::size_t n) {
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
  std::string bytes(std::size_t n) {
    std::string s(n, '\0');
    fill(s.data(), n);
    return s;
  }

 private:
  std::uint64_t next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 2685821657736338717ull;
  }
  std::uint64_t s_;
};

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

// A PNG signature followed by random bytes: enough of an "image" for a MIME type to be believable.
std::string png_bytes(std::size_t n = 2048) {
  std::string s = "\x89PNG\r\n\x1a\n";
  return s + random_bytes(n > s.size() ? n - s.size() : 0);
}

// ---- multipart/form-data ----

struct form_part {
  std::string name;
  std::optional<std::string> filename;      // absent: a plain field
  std::optional<std::string> content_type;  // absent: no Content-Type line
  std::string data;
  std::string extra_headers;  // raw header lines, each ending in \r\n
};

form_part file_part(std::string data, std::string filename = "blob.bin",
                    std::optional<std::string> content_type = "application/octet-stream") {
  return {"file", std::move(filename), std::move(content_type), std::move(data), ""};
}
form_part field(std::string name, std::string value) { return {std::move(name), std::nullopt, std::nullopt, std::move(value), ""}; }

// "--B\r\n<headers>\r\n\r\n": everything of a part before its data.
std::string part_head(const form_part& p, const std::string& b = boundary) {
  std::string s = "--" + b + "\r\nContent-Disposition: form-data; name=\"" + p.name + "\"";
  if (p.filename) s += "; filename=\"" + *p.filename + "\"";
  s += "\r\n";
  if (p.content_type) s += "Content-Type: " + *p.content_type + "\r\n";
  s += p.extra_headers + "\r\n";
  return s;
}
std::string closing(const std::string& b = boundary) { return "\r\n--" + b + "--\r\n"; }

std::string multipart(const std::vector<form_part>& parts, bool close = true, const std::string& b = boundary) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) s += "\r\n";
    s += part_head(parts[i], b) + parts[i].data;
  }
  if (close) s += closing(b);
  return s;
}
std::string multipart_type(const std::string& b = boundary) { return "multipart/form-data; boundary=" + b; }

// ---- signed URLs ----

struct signed_url {
  bool ok = false;
  std::string origin;  // http://127.0.0.1:PORT
  std::string path;    // /connectors/echo/files/refs/<ref>
  std::string ref;
  std::string exp;
  std::string sig;
  std::string target() const { return path + "?exp=" + exp + "&sig=" + sig; }
};

// Splits an absolute download_url; the query's parameters may come in any order.
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

// ---- an upload streamed piece by piece over a raw connection ----

struct streamed_upload {
  std::optional<raw_response> response;
  std::uint64_t file_bytes_sent = 0;
  bool answered_early = false;  // the server answered before the whole body was sent
};

// Sends an upload of a file part of file_size bytes made by gen (into a reused 1 MiB buffer), framed by a
// Content-Length or by chunked coding; stops sending as soon as the server answers.
streamed_upload stream_upload(unsigned short port, const std::map<std::string, std::string>& auth_and_channel,
                              const std::string& filename, std::uint64_t file_size, bool chunked,
                              const std::function<void(char*, std::size_t)>& gen,
                              std::chrono::milliseconds deadline = 60s) {
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

// /proc/<pid>/status figures in kB (-1 when absent).
struct proc_memory {
  long rss_anon_kb = -1;
  long vm_hwm_kb = -1;
  long vm_rss_kb = -1;
};
proc_memory memory_of(pid_t pid) {
  proc_memory m;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    auto value = [&] { return std::atol(line.substr(line.find(':') + 1).c_str()); };
    if (line.starts_with("RssAnon:")) m.rss_anon_kb = value();
    if (line.starts_with("VmHWM:")) m.vm_hwm_kb = value();
    if (line.starts_with("VmRSS:")) m.vm_rss_kb = value();
  }
  return m;
}

// ---- the fixture: the in-process server with echo, one socket, one signed-in channel ----

class Files : public ::testing::Test {
 protected:
  Files() : Files(std::function<void(config&)>{}) {}
  explicit Files(const std::function<void(config&)>& tweak) : server({"echo.so"}, tweak) {}

  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(dp);
    channel = dp->open_authenticated();
    ASSERT_FALSE(channel.empty());
  }
  void TearDown() override {
    dp.reset();  // validates what it received while the server still runs
    server.stop();
  }

  std::map<std::string, std::string> key() const { return {{"Authorization", "Bearer " + server.key()}}; }
  std::map<std::string, std::string> key_and(const std::string& ch) const {
    auto h = key();
    h["X-XAgent-Connector-Channel-ID"] = ch;
    return h;
  }

  // POST {base}/files/uploads with the key, the channel (when not empty) and a multipart Content-Type.
  http_reply post_upload(const std::string& ch, const std::string& body,
                         std::map<std::string, std::string> headers = {}) {
    auto h = ch.empty() ? key() : key_and(ch);
    h.emplace("Content-Type", multipart_type());
    for (auto& [k, v] : headers) h[k] = v;
    return http_call(server.port(), "POST", uploads, h, body);
  }
  // An upload that must succeed: its 201 body (an empty object, after a failure, when it did not).
  json::object upload_ok(const std::string& data, const std::string& filename = "blob.bin",
                         std::optional<std::string> content_type = "application/octet-stream",
                         const std::string& on = "") {
    auto r = post_upload(on.empty() ? channel : on, multipart({file_part(data, filename, std::move(content_type))}));
    EXPECT_EQ(r.status, 201) << r.body;
    auto v = r.json();
    if (r.status != 201 || !v.is_object()) return {};
    return v.as_object();
  }
  std::string upload_ref(const std::string& data, const std::string& on = "") {
    return jstr(upload_ok(data, "blob.bin", "application/octet-stream", on), "file_ref");
  }

  http_reply get_with_key(const std::string& ref, std::map<std::string, std::string> extra = {}) {
    auto h = key();
    for (auto& [k, v] : extra) h[k] = v;
    return http_call(server.port(), "GET", refs(ref), h);
  }
  http_reply get_without_key(const std::string& target) { return http_call(server.port(), "GET", target); }
  bool healthy() { return http_get(server.port(), base + "/health", server.key()).status == 200; }

  // POST {base}/inject (echo): one inbound message.
  http_reply inject(const std::string& ch, json::object emit) {
    emit["connector_channel_id"] = ch;
    return http_call(server.port(), "POST", base + "/inject", key(), json::serialize(emit));
  }

  server_fixture server;
  std::unique_ptr<dp_client> dp;
  std::string channel;
};

class FilesSmall : public Files {
 protected:
  FilesSmall() : Files([](config& c) { c.files.max_bytes = small_max; }) {}
};
class FilesShortUrl : public Files {
 protected:
  FilesShortUrl() : Files([](config& c) { c.files.url_ttl_s = 1; }) {}
};
class FilesShortTtl : public Files {
 protected:
  FilesShortTtl() : Files([](config& c) { c.files.ttl_s = 1; }) {}
};

// ======================= upload: who may, and what =======================

TEST_F(Files, an_upload_needs_the_key) {
  auto body = multipart({file_part("x")});
  std::map<std::string, std::string> h{{"X-XAgent-Connector-Channel-ID", channel}, {"Content-Type", multipart_type()}};
  auto r = http_call(server.port(), "POST", uploads, h, body);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(error_of(r), "unauthorized") << r.body;
  h["Authorization"] = "Bearer " + server.key() + "x";
  r = http_call(server.port(), "POST", uploads, h, body);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(error_of(r), "unauthorized") << r.body;
  EXPECT_FALSE(upload_ref("x").empty()) << "the same request with the key is fine";
}

TEST_F(Files, an_upload_is_a_post) {
  for (const char* method : {"GET", "PUT", "DELETE", "PATCH"}) {
    auto r = http_call(server.port(), method, uploads, key_and(channel));
    EXPECT_EQ(r.status, 405) << method << ": " << r.body;
  }
}

TEST_F(Files, an_upload_needs_a_known_signed_in_channel) {
  auto body = multipart({file_part("abc")});
  auto r = post_upload("", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r), "connector_channel_id_required") << r.body;

  r = post_upload("cch_AAAAAAAAAAAAAAAAAAAAAA", body);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(error_of(r), "connection_not_found") << r.body;

  auto signed_out = dp->open();
  ASSERT_FALSE(signed_out.empty());
  r = post_upload(signed_out, body);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(error_of(r), "connection_not_authenticated") << r.body;

  r = post_upload(channel, body);
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(Files, a_body_that_is_not_multipart_form_data_is_invalid_multipart) {
  auto body = multipart({file_part("abc")});
  for (const std::string& type : std::vector<std::string>{"text/plain", "application/json", "multipart/form-data",
                                                          "multipart/form-data; charset=utf-8",
                                                          "multipart/mixed; boundary=" + boundary}) {
    auto r = post_upload(channel, body, {{"Content-Type", type}});
    EXPECT_EQ(r.status, 400) << type << ": " << r.body;
    EXPECT_EQ(error_of(r), "invalid_multipart") << type << ": " << r.body;
  }
  auto h = key_and(channel);  // no Content-Type at all
  auto r = http_call(server.port(), "POST", uploads, h, body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r), "invalid_multipart") << r.body;
}

TEST_F(Files, a_malformed_multipart_body_is_invalid_multipart_and_the_next_upload_is_fine) {
  struct bad_case {
    std::string what;
    std::string body;
  };
  std::vector<bad_case> cases;
  cases.push_back({"no closing delimiter", multipart({file_part("some bytes")}, false)});
  cases.push_back({"no closing delimiter, data ending in CRLF", multipart({file_part("some bytes")}, false) + "\r\n"});
  auto fat = file_part("abc");
  fat.extra_headers = "X-Padding: " + std::string(9 * 1024, 'a') + "\r\n";
  cases.push_back({"part headers over 8 KiB", multipart({fat})});
  std::vector<form_part> many{file_part("abc")};
  for (int i = 1; i <= 16; ++i) many.push_back(field("extra" + std::to_string(i), "v"));
  cases.push_back({"17 parts", multipart(many)});
  cases.push_back({"no file part", multipart({field("recipient_ref", "someone")})});
  cases.push_back({"two file parts", multipart({file_part("one", "a.txt"), file_part("two", "b.txt")})});
  cases.push_back({"garbage", "this is not multipart at all"});
  cases.push_back({"empty body", ""});
  cases.push_back({"another boundary", multipart({file_part("abc")}, true, "someOtherBoundary")});
  for (const auto& c : cases) {
    auto r = post_upload(channel, c.body);
    EXPECT_EQ(r.status, 400) << c.what << ": " << r.body;
    EXPECT_EQ(error_of(r), "invalid_multipart") << c.what << ": " << r.body;
    EXPECT_FALSE(r.json().is_object() && r.json().as_object().contains("file_ref")) << c.what;
  }
  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("after the bad ones").empty());
}

TEST_F(Files, a_successful_upload_answers_201_with_every_field) {
  const std::string data = "hello transfer plane\n";
  auto before = now_ms();
  auto r = post_upload(channel, multipart({field("recipient_ref", "peer-1"), file_part(data, "notes.txt", "text/plain"),
                                           field("reply_token", "rt-1")}));
  auto after = now_ms();
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_NE(r.headers["content-type"].find("application/json"), std::string::npos) << r.headers["content-type"];
  auto v = r.json();
  ASSERT_TRUE(v.is_object()) << r.body;
  auto o = v.as_object();
  auto ref = jstr(o, "file_ref");
  EXPECT_TRUE(is_file_ref(ref)) << ref;
  EXPECT_EQ(jstr(o, "file_type"), "file");
  EXPECT_EQ(jstr(o, "filename"), "notes.txt");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(data.size()));
  const std::int64_t ttl_ms = 604800LL * 1000;
  EXPECT_GE(jint(o, "expires_at"), before + ttl_ms - 2000) << r.body;
  EXPECT_LE(jint(o, "expires_at"), after + ttl_ms + 2000) << r.body;
  EXPECT_EQ(jstr(o, "mime_type"), "text/plain");
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  auto url = jstr(o, "download_url");
  static const std::regex shape(R"(^http://127\.0\.0\.1:([0-9]+)/connectors/echo/files/refs/(file_[0-9a-f]{32})\?exp=([0-9]+)&sig=([0-9a-f]{64})$)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(url, m, shape)) << url;
  EXPECT_EQ(m[1].str(), std::to_string(server.port()));
  EXPECT_EQ(m[2].str(), ref);
  auto exp = std::stoll(m[3].str());
  EXPECT_GE(exp, before / 1000 + 3600 - 2) << "exp is unix seconds, files.url_ttl_s (3600) ahead";
  EXPECT_LE(exp, after / 1000 + 3600 + 2);
  // Every upload is a new file_ref, also for the same bytes.
  auto again = upload_ok(data, "notes.txt", "text/plain");
  EXPECT_TRUE(is_file_ref(jstr(again, "file_ref")));
  EXPECT_NE(jstr(again, "file_ref"), ref);
  EXPECT_EQ(jstr(again, "sha256"), sha256_of(data));
}

TEST_F(Files, an_empty_file_is_a_file_too) {
  auto o = upload_ok("", "empty.txt", "text/plain");
  EXPECT_EQ(jint(o, "byte_size"), 0);
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(""));
  auto r = get_with_key(jstr(o, "file_ref"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.headers["content-length"], "0");
}

TEST_F(Files, file_type_and_mime_type_come_from_the_part_else_the_extension) {
  struct type_case {
    std::string filename;
    std::optional<std::string> content_type;
    std::string mime;  // expected; a trailing '/' means "this major type"
    std::string file_type;
  };
  std::vector<type_case> cases{
      {"pic.png", "image/png", "image/png", "image"},
      {"pic.bin", "image/webp", "image/webp", "image"},
      {"sound.dat", "audio/ogg", "audio/ogg", "audio"},
      {"movie.xyz", "video/webm", "video/webm", "video"},
      {"doc.pdf", "application/pdf", "application/pdf", "file"},
      {"photo.jpg", std::nullopt, "image/jpeg", "image"},
      {"graphic.png", std::nullopt, "image/png", "image"},
      {"clip.mp4", std::nullopt, "video/mp4", "video"},
      {"song.mp3", std::nullopt, "audio/", "audio"},
      {"paper.pdf", std::nullopt, "application/pdf", "file"},
      {"blob.zzqqx", std::nullopt, "application/octet-stream", "file"},
      {"noextension", std::nullopt, "application/octet-stream", "file"},
  };
  for (const auto& c : cases) {
    auto o = upload_ok("bytes of " + c.filename, c.filename, c.content_type);
    auto mime = jstr(o, "mime_type");
    if (c.mime.ends_with('/')) {
      EXPECT_TRUE(mime.starts_with(c.mime)) << c.filename << ": " << mime;
    } else {
      EXPECT_EQ(mime, c.mime) << c.filename;
    }
    EXPECT_EQ(jstr(o, "file_type"), c.file_type) << c.filename;
    EXPECT_EQ(jstr(o, "filename"), c.filename);
    auto r = get_with_key(jstr(o, "file_ref"));
    EXPECT_EQ(r.headers["content-type"], mime) << c.filename << ": the download says what the upload said";
  }
}

TEST_F(Files, a_filename_is_reduced_to_its_last_component_without_control_characters) {
  std::vector<std::pair<std::string, std::string>> cases{
      {"../../etc/passwd", "passwd"},
      {"/var/tmp/report.txt", "report.txt"},
      {"dir/sub/inner.txt", "inner.txt"},
      {std::string("tab\there.txt"), "tabhere.txt"},
  };
  for (const auto& [sent, kept] : cases) {
    auto o = upload_ok("content", sent, "text/plain");
    EXPECT_EQ(jstr(o, "filename"), kept) << "sent " << json::serialize(json::value(sent));
    auto r = get_with_key(jstr(o, "file_ref"));
    EXPECT_EQ(r.status, 200);
    auto cd = r.headers["content-disposition"];
    EXPECT_NE(cd.find("filename=\"" + kept + "\""), std::string::npos) << cd;
    EXPECT_EQ(cd.find(".."), std::string::npos) << cd;
    EXPECT_EQ(cd.find('/'), std::string::npos) << cd;
  }
}

// A raw control character in a part's header is malformed (RFC 9110 §5.5): refused, nothing stored.
TEST_F(Files, a_raw_control_character_in_an_upload_filename_is_invalid_multipart) {
  auto r = post_upload(channel, multipart({file_part("content", std::string("re\x01po\x1frt.txt"), "text/plain")}));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r), "invalid_multipart") << r.body;
  EXPECT_EQ(r.body.find('\x01'), std::string::npos) << "the error does not quote the input";
}

// Through echo's /inject the name is JSON, so control characters and paths can reach the store: removed there.
TEST_F(Files, an_injected_attachment_name_loses_its_path_and_control_characters) {
  auto r = inject(channel, {{"text", "named"},
                            {"files", json::array{json::object{{"filename", std::string("../../x/ev\x01il\x7f.png")},
                                                               {"mime_type", "image/png"},
                                                               {"content_base64", base64(png_bytes(64))}}}}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  auto* files = p.if_contains("files");
  ASSERT_TRUE(files && files->is_array() && files->as_array().size() == 1 && files->as_array()[0].is_object())
      << json::serialize(p);
  auto f = files->as_array()[0].as_object();
  EXPECT_EQ(jstr(f, "filename"), "evil.png") << json::serialize(f);
  auto d = get_with_key(jstr(f, "file_ref"));
  EXPECT_NE(d.headers["content-disposition"].find("filename=\"evil.png\""), std::string::npos)
      << d.headers["content-disposition"];
  dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
}

TEST_F(Files, expect_100_continue_is_answered_before_the_body_is_sent) {
  const std::string data = random_bytes(40000);
  auto body = multipart({file_part(data, "continued.bin")});
  auto c = raw_http::connect(server.port());
  ASSERT_TRUE(c);
  auto h = key_and(channel);
  h["Content-Type"] = multipart_type();
  h["Content-Length"] = std::to_string(body.size());
  h["Expect"] = "100-continue";
  ASSERT_TRUE(c->send(request_head("POST", uploads, h)));
  auto interim = c->read_response(5s);
  ASSERT_TRUE(interim) << "no answer to the head alone: the server waits for a body it should have asked for";
  EXPECT_EQ(interim->status, 100) << interim->head;
  ASSERT_TRUE(c->send(body));
  auto final_answer = c->read_response(10s);
  ASSERT_TRUE(final_answer);
  ASSERT_EQ(final_answer->status, 201) << final_answer->body;
  auto o = final_answer->json().as_object();
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, data);
}

TEST_F(Files, form_fields_may_come_in_any_order_around_the_file) {
  const std::string data = "ordered";
  auto r = post_upload(channel, multipart({field("reply_token", "rt"), file_part(data, "o.txt", "text/plain"),
                                           field("recipient_ref", "peer")}));
  ASSERT_EQ(r.status, 201) << r.body;
  auto ref = jstr(r.json().as_object(), "file_ref");
  EXPECT_EQ(get_with_key(ref).body, data);
  r = post_upload(channel, multipart({file_part(data, "o.txt", "text/plain"), field("recipient_ref", "peer")}));
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(Files, data_that_looks_like_a_boundary_is_kept_intact) {
  // The delimiter is CRLF + "--" + boundary; anything short of that is data.
  std::string data = "--" + boundary + "x\r\n--" + boundary.substr(0, 10) + "\r\n-\r\n\r\n--\r\n" + random_bytes(5000);
  auto o = upload_ok(data, "tricky.bin");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(data.size()));
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, data);
}

// ======================= size limits =======================

TEST_F(FilesSmall, a_content_length_over_the_allowance_is_413_before_any_body_byte) {
  auto c = raw_http::connect(server.port());
  ASSERT_TRUE(c);
  auto h = key_and(channel);
  h["Content-Type"] = multipart_type();
  h["Content-Length"] = std::to_string(small_max + header_allowance + 1);
  ASSERT_TRUE(c->send(request_head("POST", uploads, h)));
  auto r = c->read_response(5s);  // no body byte is ever sent
  ASSERT_TRUE(r) << "no answer before the body: the limit was not decided from Content-Length";
  EXPECT_EQ(r->status, 413) << r->head;
  EXPECT_EQ(r->error_code(), "payload_too_large") << r->body;

  // With Expect: 100-continue the answer is the 413, not a 100.
  auto c2 = raw_http::connect(server.port());
  ASSERT_TRUE(c2);
  h["Expect"] = "100-continue";
  h["Content-Length"] = std::to_string(50ull * 1024 * 1024);
  ASSERT_TRUE(c2->send(request_head("POST", uploads, h)));
  auto r2 = c2->read_response(5s);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 413) << r2->head;
  EXPECT_EQ(r2->error_code(), "payload_too_large") << r2->body;

  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("still fine").empty());
}

TEST_F(FilesSmall, a_file_of_exactly_max_bytes_is_accepted) {
  auto data = random_bytes(small_max);
  auto o = upload_ok(data, "exact.bin");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(small_max));
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, data);
}

TEST_F(FilesSmall, a_file_one_byte_over_max_within_the_content_length_allowance_is_413) {
  byte_source src(7);
  auto s = stream_upload(server.port(), key_and(channel), "over.bin", small_max + 1, false,
                         [&](char* p, std::size_t n) { src.fill(p, n); });
  ASSERT_TRUE(s.response) << "no answer";
  EXPECT_EQ(s.response->status, 413) << s.response->head << s.response->body;
  EXPECT_EQ(s.response->error_code(), "payload_too_large") << s.response->body;
  EXPECT_FALSE(s.response->json().is_object() && s.response->json().as_object().contains("file_ref"));
  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("after the 413").empty());
}

TEST_F(FilesSmall, a_chunked_upload_is_streamed_and_over_max_is_413) {
  // Under the limit, chunked coding (no Content-Length) is an ordinary upload.
  byte_source a(11), a_copy(11);
  auto ok = stream_upload(server.port(), key_and(channel), "chunked.bin", small_max / 2, true,
                          [&](char* p, std::size_t n) { a.fill(p, n); });
  ASSERT_TRUE(ok.response) << "no answer to a chunked upload";
  ASSERT_EQ(ok.response->status, 201) << ok.response->body;
  auto expected = a_copy.bytes(small_max / 2);
  auto o = ok.response->json().as_object();
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(expected));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, expected);

  // Over it, the server stops reading once the file passes files.max_bytes.
  byte_source b(12);
  auto over = stream_upload(server.port(), key_and(channel), "huge.bin", 8 * small_max, true,
                            [&](char* p, std::size_t n) { b.fill(p, n); });
  ASSERT_TRUE(over.response) << "no answer to an oversized chunked upload";
  EXPECT_EQ(over.response->status, 413) << over.response->body;
  EXPECT_EQ(over.response->error_code(), "payload_too_large") << over.response->body;
  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("after the chunked 413").empty());
}

// ======================= download =======================

TEST_F(Files, a_download_with_the_key_has_the_bytes_and_every_header) {
  auto data = random_bytes(5000);
  auto o = upload_ok(data, "report.pdf", "application/pdf");
  auto r = get_with_key(jstr(o, "file_ref"));
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 200);
  EXPECT_EQ(r.body, data);
  EXPECT_EQ(r.headers["content-type"], "application/pdf");
  EXPECT_EQ(r.headers["content-length"], "5000");
  EXPECT_EQ(r.headers["etag"], "\"" + sha256_of(data) + "\"");
  EXPECT_EQ(r.headers["accept-ranges"], "bytes");
  auto cd = r.headers["content-disposition"];
  EXPECT_TRUE(cd.starts_with("attachment")) << cd;
  EXPECT_NE(cd.find("filename=\"report.pdf\""), std::string::npos) << cd;
  EXPECT_NE(cd.find("filename*=UTF-8''report.pdf"), std::string::npos) << cd;
}

TEST_F(Files, a_non_ascii_filename_has_an_ascii_fallback_and_an_exact_filename_star) {
  const std::string name = "r\xc3\xa9sum\xc3\xa9 \xe6\x9d\xb1\xe4\xba\xac.pdf";  // "résumé 東京.pdf"
  auto o = upload_ok("%PDF-1.4 pretend", name, "application/pdf");
  EXPECT_EQ(jstr(o, "filename"), name);
  auto r = get_with_key(jstr(o, "file_ref"));
  ASSERT_EQ(r.status, 200);
  auto cd = r.headers["content-disposition"];
  static const std::regex fallback(R"(filename="([^"]*)\")");
  static const std::regex star(R"(filename\*=UTF-8''([^;\s]+))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cd, m, fallback)) << cd;
  auto ascii = m[1].str();
  EXPECT_FALSE(ascii.empty()) << cd;
  EXPECT_TRUE(std::all_of(ascii.begin(), ascii.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '\\'; })) << cd;
  EXPECT_TRUE(ascii.ends_with(".pdf")) << cd;
  ASSERT_TRUE(std::regex_search(cd, m, star)) << cd;
  auto encoded = m[1].str();
  // RFC 8187 attr-char or %XX only.
  EXPECT_TRUE(std::all_of(encoded.begin(), encoded.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$&+-.^_`|~%").find(c) != std::string_view::npos;
  })) << cd;
  EXPECT_EQ(percent_decode(encoded), name) << cd;
  EXPECT_TRUE(std::all_of(cd.begin(), cd.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) << "header is ASCII: " << cd;
}

TEST_F(Files, a_3_mib_random_file_round_trips_with_its_sha256) {
  auto data = random_bytes(3 * 1024 * 1024);
  auto digest = sha256_of(data);
  auto o = upload_ok(data, "random.bin");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(data.size()));
  EXPECT_EQ(jstr(o, "sha256"), digest);
  auto r = get_with_key(jstr(o, "file_ref"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), data.size());
  EXPECT_TRUE(r.body == data) << "the bytes differ";
  EXPECT_EQ(sha256_of(r.body), digest);
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(o, "download_url");
  auto s = get_without_key(u.target());
  ASSERT_EQ(s.status, 200);
  EXPECT_EQ(sha256_of(s.body), digest);
}

TEST_F(Files, a_download_naming_another_channel_is_403_and_its_own_channel_200) {
  auto other = dp->open_authenticated("tok-other-2");
  ASSERT_FALSE(other.empty());
  auto ref = upload_ref("bound to the first channel");
  auto r = get_with_key(ref, {{"X-XAgent-Connector-Channel-ID", other}});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body, "bound to the first channel");
  r = get_with_key(ref, {{"X-XAgent-Connector-Channel-ID", channel}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "bound to the first channel");
  // And the other way round.
  auto other_ref = upload_ref("bound to the second", other);
  EXPECT_EQ(get_with_key(other_ref, {{"X-XAgent-Connector-Channel-ID", channel}}).status, 403);
  EXPECT_EQ(get_with_key(other_ref, {{"X-XAgent-Connector-Channel-ID", other}}).status, 200);
}

TEST_F(Files, a_signed_url_works_without_the_key_and_only_untouched) {
  auto a = upload_ok("file A bytes", "a.txt", "text/plain");
  auto b = upload_ok("file B bytes", "b.txt", "text/plain");
  auto ua = parse_url(jstr(a, "download_url"));
  auto ub = parse_url(jstr(b, "download_url"));
  ASSERT_TRUE(ua.ok && ub.ok);
  EXPECT_EQ(ua.origin, "http://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(ua.path, refs(jstr(a, "file_ref")));

  auto r = get_without_key(ua.target());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "file A bytes");
  EXPECT_EQ(r.headers["content-type"], "text/plain");

  auto tampered = ua;
  tampered.sig = tamper(ua.sig);
  r = get_without_key(tampered.target());
  EXPECT_EQ(r.status, 403) << "one hex digit of sig changed: " << r.body;
  EXPECT_NE(r.body, "file A bytes");

  tampered = ua;
  tampered.exp = std::to_string(std::stoll(ua.exp) + 1);
  r = get_without_key(tampered.target());
  EXPECT_EQ(r.status, 403) << "exp moved by a second: " << r.body;
  tampered.exp = std::to_string(std::stoll(ua.exp) + 86400 * 365);
  EXPECT_EQ(get_without_key(tampered.target()).status, 403) << "exp moved by a year";

  tampered = ua;
  tampered.sig = std::string(ua.sig);
  for (auto& ch : tampered.sig) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (tampered.sig != ua.sig) {
    EXPECT_NE(get_without_key(tampered.target()).status, 200) << "sig in upper case";
  }

  r = get_without_key(ua.path);
  EXPECT_EQ(r.status, 401) << "no sig, no exp, no key: " << r.body;

  auto cross = ub;  // B's path with A's exp and sig
  cross.exp = ua.exp;
  cross.sig = ua.sig;
  r = get_without_key(cross.target());
  EXPECT_EQ(r.status, 403) << "A's signature on B's path: " << r.body;
  EXPECT_NE(r.body, "file B bytes");
  EXPECT_EQ(get_without_key(ub.target()).status, 200);

  // A signature of another plugin's path would need another plugin id in the HMAC; the same path under another
  // base is simply not this route.
  EXPECT_NE(get_without_key("/connectors/echo2/files/refs/" + ua.ref + "?exp=" + ua.exp + "&sig=" + ua.sig).status, 200);
}

TEST_F(FilesShortUrl, a_signed_url_turns_403_once_its_exp_passes) {
  auto o = upload_ok("short lived link", "s.txt", "text/plain");
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(o, "download_url");
  auto exp_ms = std::stoll(u.exp) * 1000;
  EXPECT_LE(exp_ms, now_ms() + 2000) << "files.url_ttl_s is 1";
  auto first_at = now_ms();
  auto first = get_without_key(u.target());
  if (first_at < exp_ms - 300) {  // else too late to tell
    EXPECT_EQ(first.status, 200) << "still inside exp";
  }
  int last = 0;
  EXPECT_TRUE(wait_until([&] { return (last = get_without_key(u.target()).status) == 403; }, 5s))
      << "still " << last << " after exp";
  EXPECT_GE(now_ms(), exp_ms - 1000) << "403 before exp";
  // The file itself lives on (files.ttl_s is the default): the key still reads it.
  EXPECT_EQ(get_with_key(u.ref).status, 200);
}

TEST_F(FilesShortTtl, an_expired_file_is_404_for_the_key_and_the_signed_url) {
  auto before = now_ms();
  auto o = upload_ok("expires soon", "e.txt", "text/plain");
  auto ref = jstr(o, "file_ref");
  EXPECT_GE(jint(o, "expires_at"), before);
  EXPECT_LE(jint(o, "expires_at"), now_ms() + 1000 + 1000) << "files.ttl_s is 1";
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok);
  http_reply r;
  EXPECT_TRUE(wait_until([&] { return (r = get_with_key(ref)).status == 404; }, 5s)) << r.status;
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_GE(now_ms(), jint(o, "expires_at") - 1000) << "404 well before expires_at";
  r = get_without_key(u.target());
  EXPECT_EQ(r.status, 404) << "the signature is fine, the file is gone: " << r.body;
  EXPECT_EQ(http_call(server.port(), "DELETE", refs(ref), key()).status, 404);
  // An outbound final cannot name it any more either.
  auto sent = dp->send("chat.message", {{"message_id", "m-expired"}, {"text", "t"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                       channel);
  auto ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "rejected") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "file_ref_not_found") << json::serialize(*ack);
}

TEST_F(Files, unknown_and_hostile_refs_are_404_and_the_server_stays_up) {
  auto real = upload_ref("a real one");
  ASSERT_TRUE(is_file_ref(real)) << real;
  std::string upper = "file_" + std::string(32, 'A');
  std::string upper_of_real = real;
  std::transform(upper_of_real.begin() + 5, upper_of_real.end(), upper_of_real.begin() + 5,
                 [](char ch) { return static_cast<char>(std::toupper(static_cast<unsigned char>(ch))); });
  std::vector<std::string> hostile{
      "file_0123456789abcdef0123456789abcdef",  // well formed, never issued
      "..%2F..%2Fetc%2Fpasswd",
      "../x",
      "..",
      "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "file_" + std::string(4995, 'a'),
      upper,
      upper_of_real,
      real + "%00",
      "%00",
      "file_%00" + real.substr(5),
      real + "%2F..",
      real.substr(0, real.size() - 1),
      "file_",
      "%ff%fe",
  };
  for (const auto& ref : hostile) {
    auto r = get_with_key(ref);
    EXPECT_EQ(r.status, 404) << ref.substr(0, 80) << ": " << r.body.substr(0, 200);
    EXPECT_NE(r.body, "a real one") << ref.substr(0, 80);
  }
  auto r = get_with_key("file_0123456789abcdef0123456789abcdef");
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_TRUE(healthy());
  EXPECT_EQ(get_with_key(real).body, "a real one");
}

TEST_F(Files, ranges_answer_206_with_exactly_those_bytes) {
  auto data = random_bytes(1000);
  const std::string size = std::to_string(data.size());
  auto ref = upload_ref(data);
  auto ranged = [&](const std::string& range) { return get_with_key(ref, {{"Range", range}}); };

  auto r = ranged("bytes=10-19");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 10-19/" + size);
  EXPECT_EQ(r.headers["content-length"], "10");
  EXPECT_EQ(r.body, data.substr(10, 10));

  r = ranged("bytes=0-0");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 0-0/" + size);
  EXPECT_EQ(r.body, data.substr(0, 1));

  r = ranged("bytes=990-");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 990-999/" + size);
  EXPECT_EQ(r.body, data.substr(990));

  r = ranged("bytes=-50");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 950-999/" + size);
  EXPECT_EQ(r.body, data.substr(950));

  r = ranged("bytes=900-5000");  // the end clamps to the file (RFC 9110 §14.1.2)
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 900-999/" + size);
  EXPECT_EQ(r.body, data.substr(900));

  for (const std::string past : {"bytes=1000-", "bytes=1000-1005", "bytes=5000-6000"}) {
    r = ranged(past);
    EXPECT_EQ(r.status, 416) << past;
    EXPECT_EQ(r.headers["content-range"], "bytes */" + size) << past;
  }

  for (const std::string ignored : {"bytes=abc", "items=0-5", "bytes=5-2", "bytes=", "bytes=0-1,5-6", "bytes=-0x10",
                                    "bytes 0-10"}) {
    r = ranged(ignored);
    EXPECT_EQ(r.status, 200) << ignored;
    EXPECT_EQ(r.body, data) << ignored;
    EXPECT_EQ(r.headers.count("content-range"), 0u) << ignored;
  }

  // Through a signed URL too.
  auto u = parse_url(jstr(upload_ok(data, "r.bin"), "download_url"));
  auto s = http_call(server.port(), "GET", u.target(), {{"Range", "bytes=100-199"}});
  EXPECT_EQ(s.status, 206);
  EXPECT_EQ(s.body, data.substr(100, 100));
}

TEST_F(Files, head_has_the_headers_of_get_and_no_body) {
  auto data = random_bytes(4321);
  auto o = upload_ok(data, "head.png", "image/png");
  auto ref = jstr(o, "file_ref");
  auto get = get_with_key(ref);
  ASSERT_EQ(get.status, 200);
  auto c = raw_http::connect(server.port());
  ASSERT_TRUE(c);
  auto h = key();
  h["Connection"] = "close";
  ASSERT_TRUE(c->send(request_head("HEAD", refs(ref), h)));
  auto head = c->read_response(5s, true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200) << head->head;
  for (const char* name : {"content-type", "content-length", "etag", "accept-ranges", "content-disposition"})
    EXPECT_EQ(head->header(name), get.headers[name]) << name;
  EXPECT_EQ(head->header("content-length"), "4321");
  EXPECT_EQ(c->read_to_end(3s), "") << "HEAD sent body bytes";
  // An unknown ref is 404 for HEAD as well.
  auto missing = raw_request(server.port(), "HEAD", refs("file_" + std::string(32, '0')), key(), {}, true);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(Files, if_none_match_with_the_etag_is_304) {
  auto data = random_bytes(2000);
  auto ref = upload_ref(data);
  auto etag = "\"" + sha256_of(data) + "\"";
  auto r = get_with_key(ref, {{"If-None-Match", etag}});
  EXPECT_EQ(r.status, 304);
  EXPECT_EQ(r.body, "");
  r = get_with_key(ref, {{"If-None-Match", "\"" + std::string(64, '0') + "\""}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, data);
  auto u = parse_url(jstr(upload_ok(data), "download_url"));
  EXPECT_EQ(http_call(server.port(), "GET", u.target(), {{"If-None-Match", etag}}).status, 304);
}

TEST_F(Files, delete_with_the_key_removes_the_file) {
  auto o = upload_ok("to be deleted", "d.txt", "text/plain");
  auto ref = jstr(o, "file_ref");
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok);
  auto r = http_call(server.port(), "DELETE", refs(ref));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(error_of(r), "unauthorized");
  r = http_call(server.port(), "DELETE", u.target());
  EXPECT_EQ(r.status, 401) << "a signature is for reading only: " << r.body;
  ASSERT_EQ(get_with_key(ref).status, 200) << "an unauthorized DELETE deleted it";

  r = http_call(server.port(), "DELETE", refs(ref), key());
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(r.body, "");
  r = get_with_key(ref);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_EQ(get_without_key(u.target()).status, 404);
  r = http_call(server.port(), "DELETE", refs(ref), key());
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_EQ(http_call(server.port(), "DELETE", refs("file_" + std::string(32, '1')), key()).status, 404);
}

TEST_F(Files, files_survive_a_server_restart_on_the_same_store) {
  auto data = random_bytes(200000);
  auto o = upload_ok(data, "kept.bin");
  auto ref = jstr(o, "file_ref");
  auto u = parse_url(jstr(o, "download_url"));
  dp.reset();
  server.stop();
  server.start();
  auto r = get_with_key(ref);
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == data);
  // The signing secret is kept in the store: a URL handed out before the restart still works.
  auto s = get_without_key(u.target());
  EXPECT_EQ(s.status, 200);
  EXPECT_TRUE(s.body == data);
}

// ======================= files on messages =======================

TEST_F(Files, an_injected_attachment_arrives_in_chat_message_with_a_signed_download_url) {
  auto png = png_bytes(3000);
  auto before = now_ms();
  auto r = inject(channel, {{"text", "see attached"},
                            {"files", json::array{json::object{{"filename", "a.png"}, {"mime_type", "image/png"},
                                                               {"content_base64", base64(png)}}}}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "text"), "see attached");
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array()) << json::serialize(p);
  auto& files = p.at("files").as_array();
  ASSERT_EQ(files.size(), 1u) << json::serialize(p);
  auto f = files[0].as_object();
  EXPECT_EQ(jstr(f, "type"), "image");
  EXPECT_TRUE(is_file_ref(jstr(f, "file_ref"))) << json::serialize(f);
  EXPECT_EQ(jstr(f, "filename"), "a.png");
  EXPECT_EQ(jstr(f, "mime_type"), "image/png");
  EXPECT_EQ(jint(f, "byte_size"), static_cast<std::int64_t>(png.size()));
  EXPECT_GE(jint(f, "expires_at"), before + 604800LL * 1000 - 5000) << json::serialize(f);
  EXPECT_FALSE(f.contains("content_base64")) << "bytes never ride on the data plane";
  for (const auto& frame : dp->received()) EXPECT_EQ(frame.find(base64(png).substr(0, 40)), std::string::npos);
  auto u = parse_url(jstr(f, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(f, "download_url");
  EXPECT_EQ(u.origin, "http://127.0.0.1:" + std::to_string(server.port())) << "download_url is absolute";
  EXPECT_EQ(u.path, refs(jstr(f, "file_ref")));
  EXPECT_TRUE(is_lower_hex(u.sig, 64)) << u.sig;
  auto d = get_without_key(u.target());
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_TRUE(d.body == png) << "the downloaded bytes differ";
  EXPECT_EQ(d.headers["content-type"], "image/png");
  dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
  // The inbound file is bound to its channel too.
  auto other = dp->open_authenticated("tok-other-3");
  EXPECT_EQ(get_with_key(u.ref, {{"X-XAgent-Connector-Channel-ID", other}}).status, 403);
}

TEST_F(Files, a_file_message_may_have_empty_text_and_several_files) {
  auto pdf = random_bytes(1500);
  auto png = png_bytes(900);
  auto r = inject(channel, {{"text", ""},
                            {"files", json::array{json::object{{"filename", "doc.pdf"}, {"mime_type", "application/pdf"},
                                                               {"content_base64", base64(pdf)}},
                                                  json::object{{"filename", "pic.png"}, {"mime_type", "image/png"},
                                                               {"content_base64", base64(png)}}}}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "text"), "");
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array());
  auto& files = p.at("files").as_array();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(jstr(files[0].as_object(), "type"), "file");
  EXPECT_EQ(jstr(files[0].as_object(), "filename"), "doc.pdf");
  EXPECT_EQ(jstr(files[1].as_object(), "type"), "image");
  EXPECT_NE(jstr(files[0].as_object(), "file_ref"), jstr(files[1].as_object(), "file_ref"));
  EXPECT_TRUE(get_without_key(parse_url(jstr(files[0].as_object(), "download_url")).target()).body == pdf);
  EXPECT_TRUE(get_without_key(parse_url(jstr(files[1].as_object(), "download_url")).target()).body == png);
  dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
}

TEST_F(Files, a_v1_socket_gets_message_push_with_the_same_files_and_a_message_type) {
  auto v1 = dp_client::connect(server.port(), server.key(), "echo", {{"supported_profiles", json::array{"xagent.im.v1"}}});
  ASSERT_TRUE(v1);
  auto ch = v1->open_authenticated();
  ASSERT_FALSE(ch.empty());
  auto png = png_bytes(1200);
  auto pdf = random_bytes(800);
  auto png_item = json::object{{"filename", "a.png"}, {"mime_type", "image/png"}, {"content_base64", base64(png)}};
  auto pdf_item = json::object{{"filename", "b.pdf"}, {"mime_type", "application/pdf"}, {"content_base64", base64(pdf)}};

  ASSERT_EQ(inject(ch, {{"text", "an image"}, {"files", json::array{png_item}}}).status, 202);
  auto m = v1->next_push("message.push", ch);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "message_type"), "image") << json::serialize(p);
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array()) << json::serialize(p);
  ASSERT_EQ(p.at("files").as_array().size(), 1u);
  auto f = p.at("files").as_array()[0].as_object();
  EXPECT_EQ(jstr(f, "type"), "image");
  EXPECT_TRUE(is_file_ref(jstr(f, "file_ref")));
  EXPECT_EQ(jstr(f, "filename"), "a.png");
  EXPECT_EQ(jstr(f, "mime_type"), "image/png");
  EXPECT_EQ(jint(f, "byte_size"), static_cast<std::int64_t>(png.size()));
  EXPECT_GT(jint(f, "expires_at"), now_ms());
  auto u = parse_url(jstr(f, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(f, "download_url");
  EXPECT_TRUE(get_without_key(u.target()).body == png);

  ASSERT_EQ(inject(ch, {{"text", "a document first"}, {"files", json::array{pdf_item, png_item}}}).status, 202);
  m = v1->next_push("message.push", ch);
  ASSERT_TRUE(m);
  p = payload_of(*m);
  EXPECT_EQ(text_of(p, "message_type"), "file") << json::serialize(p);
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array());
  EXPECT_EQ(p.at("files").as_array().size(), 2u);

  ASSERT_EQ(inject(ch, {{"text", "no files"}}).status, 202);
  m = v1->next_push("message.push", ch);
  ASSERT_TRUE(m);
  EXPECT_EQ(text_of(payload_of(*m), "message_type"), "text");
}

TEST_F(Files, a_final_naming_an_upload_of_its_channel_is_accepted_and_sent_with_it) {
  auto ref = upload_ref("outbound attachment");
  auto sent = dp->send("chat.message",
                       {{"message_id", "out-files-1"}, {"text", "here you go"},
                        {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                       channel);
  auto ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(*ack, "type"), "chat.message.ack") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "message_id"), "out-files-1");

  auto r = http_get(server.port(), base + "/sent", server.key());
  ASSERT_EQ(r.status, 200) << r.body;
  bool found = false;
  auto sent_log = r.json();
  ASSERT_TRUE(sent_log.is_object() && sent_log.as_object().contains("sent") && sent_log.at("sent").is_array()) << r.body;
  for (const auto& e : sent_log.at("sent").as_array()) {
    if (text_of(e.as_object(), "message_id") != "out-files-1") continue;
    found = true;
    EXPECT_EQ(text_of(e.as_object(), "text"), "here you go");
    auto* files = e.as_object().if_contains("files");
    ASSERT_TRUE(files && files->is_array()) << json::serialize(e);
    bool has_ref = std::any_of(files->as_array().begin(), files->as_array().end(), [&](const json::value& v) {
      return (v.is_string() && v.as_string() == ref) || (v.is_object() && text_of(v.as_object(), "file_ref") == ref);
    });
    EXPECT_TRUE(has_ref) << json::serialize(e);
  }
  EXPECT_TRUE(found) << r.body;
  // A file-only final (no text) is a message as well.
  auto ref2 = upload_ref("second attachment");
  sent = dp->send("chat.message", {{"message_id", "out-files-2"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref2}}}}},
                  channel);
  ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
}

TEST_F(Files, a_final_naming_another_channels_upload_or_an_unknown_ref_is_rejected) {
  auto other = dp->open_authenticated("tok-other-4");
  ASSERT_FALSE(other.empty());
  auto foreign = upload_ref("belongs to the other channel", other);
  ASSERT_FALSE(foreign.empty());
  auto expect_rejected = [&](const std::string& message_id, const std::string& ref) {
    auto sent = dp->send("chat.message",
                         {{"message_id", message_id}, {"text", "x"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                         channel);
    auto ack = dp->answer(sent);
    ASSERT_TRUE(ack) << message_id;
    auto p = payload_of(*ack);
    EXPECT_EQ(text_of(*ack, "type"), "chat.message.ack") << json::serialize(*ack);
    EXPECT_EQ(text_of(p, "status"), "rejected") << json::serialize(*ack);
    EXPECT_EQ(text_of(p, "code"), "file_ref_not_found") << json::serialize(*ack);
    EXPECT_EQ(p.if_contains("retryable") ? p.at("retryable") : json::value(), json::value(false)) << json::serialize(*ack);
  };
  expect_rejected("out-foreign", foreign);
  expect_rejected("out-unknown", "file_" + std::string(32, '0'));
  expect_rejected("out-garbage", "../../etc/passwd");
  auto r = http_get(server.port(), base + "/sent", server.key());
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.find("out-foreign"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("out-unknown"), std::string::npos) << r.body;
  // The same file is fine on its own channel.
  auto sent = dp->send("chat.message",
                       {{"message_id", "out-own"}, {"text", "x"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", foreign}}}}},
                       other);
  auto ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
}

// ======================= the real daemon =======================

const std::string daemon_key = "xck_files_daemon_key_0123456789abcdef";

std::string daemon_config(const std::string& files_section = "") {
  return "server:\n  listen: \"127.0.0.1:0\"\n  api_keys: [\"${XCONN_TEST_KEY}\"]\nstore:\n"
         "  path: \"./var/xconn\"\n  map_size_bytes: 1073741824\nplugins:\n  dir: \"" +
         plugin_dir().string() + "\"\n" + files_section;
}

// Starts xconnd in dir (with the default config when dir has none yet); port 0 when it did not come up.
std::unique_ptr<daemon_process> start_daemon(const temp_dir& dir, unsigned short& port) {
  if (!std::filesystem::exists(dir.path() / "xconnd.yaml")) write_file(dir.path() / "xconnd.yaml", daemon_config());
  auto d = std::make_unique<daemon_process>(std::vector<std::string>{"--config", "xconnd.yaml"}, dir.path(),
                                            std::map<std::string, std::string>{{"XCONN_TEST_KEY", daemon_key}});
  port = d->wait_listening();
  EXPECT_NE(port, 0) << d->console();
  return d;
}

std::map<std::string, std::string> daemon_auth(const std::string& channel = "") {
  std::map<std::string, std::string> h{{"Authorization", "Bearer " + daemon_key}};
  if (!channel.empty()) h["X-XAgent-Connector-Channel-ID"] = channel;
  return h;
}

TEST(FilesDaemon, an_uploaded_file_survives_a_kill_9) {
  temp_dir dir;
  unsigned short port = 0;
  auto d = start_daemon(dir, port);
  ASSERT_NE(port, 0);
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(port, daemon_key);
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
  }
  auto data = random_bytes(3 * 1024 * 1024);
  auto digest = sha256_of(data);
  auto h = daemon_auth(channel);
  h["Content-Type"] = multipart_type();
  auto r = http_call(port, "POST", uploads, h, multipart({file_part(data, "durable.bin")}));
  ASSERT_EQ(r.status, 201) << r.body;
  auto o = r.json().as_object();
  EXPECT_EQ(jstr(o, "sha256"), digest);
  auto ref = jstr(o, "file_ref");
  auto u = parse_url(jstr(o, "download_url"));

  d->signal(SIGKILL);
  ASSERT_EQ(d->wait_exit(), 128 + SIGKILL);
  d = start_daemon(dir, port);
  ASSERT_NE(port, 0);

  auto g = http_call(port, "GET", refs(ref), daemon_auth());
  ASSERT_EQ(g.status, 200) << g.body.substr(0, 200);
  EXPECT_EQ(g.body.size(), data.size());
  EXPECT_TRUE(g.body == data) << "the bytes differ after the kill -9";
  EXPECT_EQ(sha256_of(g.body), digest);
  EXPECT_EQ(g.headers["etag"], "\"" + digest + "\"");
  // The channel binding survived too, and so did the signing secret (the URL now names the new port's origin
  // only in its origin part; its path and query are what the server checks).
  EXPECT_EQ(http_call(port, "GET", refs(ref), daemon_auth(channel)).status, 200);
  auto s = http_call(port, "GET", u.target());
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(sha256_of(s.body), digest);
}

TEST(FilesDaemon, the_signature_of_a_download_url_never_reaches_the_log) {
  temp_dir dir;
  unsigned short port = 0;
  auto d = start_daemon(dir, port);
  ASSERT_NE(port, 0);
  std::string sig, inbound_sig;
  {
    auto c = dp_client::connect(port, daemon_key);
    ASSERT_TRUE(c);
    auto channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
    auto h = daemon_auth(channel);
    h["Content-Type"] = multipart_type();
    auto r = http_call(port, "POST", uploads, h, multipart({file_part("planted", "plant.txt", "text/plain")}));
    ASSERT_EQ(r.status, 201) << r.body;
    auto u = parse_url(jstr(r.json().as_object(), "download_url"));
    ASSERT_TRUE(u.ok);
    sig = u.sig;
    EXPECT_EQ(http_call(port, "GET", u.target()).status, 200);
    auto bad = u;
    bad.sig = tamper(u.sig);
    EXPECT_EQ(http_call(port, "GET", bad.target()).status, 403);  // a refusal is a likely place to log the URL
    bad = u;
    bad.exp = std::to_string(std::stoll(u.exp) + 1);
    EXPECT_EQ(http_call(port, "GET", bad.target()).status, 403);
    EXPECT_EQ(http_call(port, "DELETE", u.target()).status, 401);
    // An inbound attachment's URL as well.
    auto inj = http_call(port, "POST", base + "/inject", daemon_auth(),
                         json::serialize(json::object{{"connector_channel_id", channel},
                                                      {"text", "file"},
                                                      {"files", json::array{json::object{{"filename", "x.png"},
                                                                                         {"mime_type", "image/png"},
                                                                                         {"content_base64", base64(png_bytes(100))}}}}}));
    EXPECT_EQ(inj.status, 202) << inj.body;
    auto m = c->next_push("chat.message", channel);
    auto mp = m ? payload_of(*m) : json::object{};
    auto* files = mp.if_contains("files");
    if (files && files->is_array() && !files->as_array().empty() && files->as_array()[0].is_object()) {
      auto iu = parse_url(jstr(files->as_array()[0].as_object(), "download_url"));
      inbound_sig = iu.sig;
      EXPECT_EQ(http_call(port, "GET", iu.target()).status, 200);
    } else {
      ADD_FAILURE() << "no chat.message with files";
    }
  }
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(), 0);
  auto console = d->console();
  ASSERT_FALSE(sig.empty());
  EXPECT_EQ(console.find(sig), std::string::npos) << console;
  EXPECT_EQ(console.find(sig.substr(0, 32)), std::string::npos) << "half of the signature is in the log";
  if (!inbound_sig.empty()) {
    EXPECT_EQ(console.find(inbound_sig), std::string::npos) << console;
  }
  EXPECT_EQ(console.find(daemon_key), std::string::npos);
}

#if defined(__SANITIZE_ADDRESS__)
#define XCONN_FILES_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XCONN_FILES_UNDER_ASAN 1
#endif
#endif

TEST(FilesDaemon, a_100_mib_upload_streams_through_without_the_daemon_holding_it) {
#ifdef XCONN_FILES_UNDER_ASAN
  GTEST_SKIP() << "memory figures mean nothing under ASan";
#endif
  constexpr std::uint64_t size = 100ull * 1024 * 1024;
  constexpr std::uint64_t seed = 0x5eed5eed1234ull;
  const auto limit = steady::now() + 120s;
  auto left = [&] { return std::max(1ms, std::chrono::duration_cast<std::chrono::milliseconds>(limit - steady::now())); };
  temp_dir dir;
  unsigned short port = 0;
  auto d = start_daemon(dir, port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, daemon_key);
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  ASSERT_FALSE(channel.empty());
  {  // warm up the upload and download paths so that their first-use allocations are in "before"
    auto h = daemon_auth(channel);
    h["Content-Type"] = multipart_type();
    auto w = http_call(port, "POST", uploads, h, multipart({file_part(random_bytes(256 * 1024), "warm.bin")}));
    ASSERT_EQ(w.status, 201) << w.body;
    EXPECT_EQ(http_call(port, "GET", refs(jstr(w.json().as_object(), "file_ref")), daemon_auth()).status, 200);
  }
  auto before = memory_of(d->pid());
  ASSERT_GT(before.rss_anon_kb, 0) << "no RssAnon in /proc/" << d->pid() << "/status";

  byte_source up_src(seed);
  sha256 up_hash;
  auto t0 = steady::now();
  auto s = stream_upload(port, daemon_auth(channel), "big.bin", size, false,
                         [&](char* p, std::size_t n) {
                           up_src.fill(p, n);
                           up_hash.update(std::string_view(p, n));
                         },
                         left());
  auto upload_s = std::chrono::duration<double>(steady::now() - t0).count();
  auto after_upload = memory_of(d->pid());
  ASSERT_TRUE(s.response) << "no answer to the 100 MiB upload (sent " << s.file_bytes_sent << " bytes)";
  ASSERT_EQ(s.response->status, 201) << s.response->body;
  auto digest = up_hash.hex();
  auto o = s.response->json().as_object();
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(size));
  EXPECT_EQ(jstr(o, "sha256"), digest);

  // Download, hashed as it arrives.
  sha256 down_hash;
  auto dl = raw_http::connect(port);
  ASSERT_TRUE(dl);
  auto h = daemon_auth();
  h["Connection"] = "close";
  auto t1 = steady::now();
  ASSERT_TRUE(dl->send(request_head("GET", refs(jstr(o, "file_ref")), h)));
  auto g = dl->read_response(left(), false, [&](std::string_view bytes) { down_hash.update(bytes); });
  auto download_s = std::chrono::duration<double>(steady::now() - t1).count();
  auto after_download = memory_of(d->pid());
  ASSERT_TRUE(g) << "the download did not complete in time";
  EXPECT_EQ(g->status, 200);
  EXPECT_EQ(g->body_bytes, size);
  EXPECT_EQ(down_hash.hex(), digest);

  // The ceiling on this machine: the same bytes made and written to /dev/null.
  byte_source null_src(seed);
  std::ofstream null_out("/dev/null", std::ios::binary);
  std::string piece(1024 * 1024, '\0');
  auto t2 = steady::now();
  for (std::uint64_t done = 0; done < size; done += piece.size()) {
    null_src.fill(piece.data(), piece.size());
    null_out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  null_out.flush();
  auto null_s = std::chrono::duration<double>(steady::now() - t2).count();

  // The durable ceiling: the same bytes written to a file beside the store and flushed to disk once, as the
  // upload's last commit does (the disk, not the server, bounds an upload that must survive a crash).
  byte_source disk_src(seed);
  auto disk_path = dir.path() / "ceiling.bin";
  int fd = ::open(disk_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  auto t3 = steady::now();
  for (std::uint64_t done = 0; done < size; done += piece.size()) {
    disk_src.fill(piece.data(), piece.size());
    ASSERT_EQ(::write(fd, piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
  }
  ::fdatasync(fd);
  auto disk_s = std::chrono::duration<double>(steady::now() - t3).count();
  ::close(fd);
  std::filesystem::remove(disk_path);

  auto mb = static_cast<double>(size) / 1e6;
  std::cout << std::fixed << std::setprecision(1) << "[files memory] daemon RssAnon before " << before.rss_anon_kb / 1024.0
            << " MiB, after the 100 MiB upload " << after_upload.rss_anon_kb / 1024.0 << " MiB, after its download "
            << after_download.rss_anon_kb / 1024.0 << " MiB; VmHWM before " << before.vm_hwm_kb / 1024.0
            << " MiB, after upload " << after_upload.vm_hwm_kb / 1024.0 << " MiB, after download "
            << after_download.vm_hwm_kb / 1024.0 << " MiB\n"
            << "[files speed] upload " << mb / upload_s << " MB/s (" << upload_s << " s), download "
            << mb / download_s << " MB/s (" << download_s << " s), /dev/null ceiling " << mb / null_s << " MB/s ("
            << null_s << " s), disk write + fdatasync ceiling " << mb / disk_s << " MB/s (" << disk_s << " s) for " << mb
            << " MB: upload at " << 100.0 * disk_s / upload_s << " % of the disk ceiling" << std::endl;
  EXPECT_LT(after_upload.rss_anon_kb - before.rss_anon_kb, 100 * 1024) << "RssAnon grew by the file's size or more";
  EXPECT_LT(after_download.rss_anon_kb - before.rss_anon_kb, 100 * 1024) << "RssAnon grew by the file's size or more";
  EXPECT_LT(steady::now(), limit);
}

}  // namespace
}  // namespace xconn::test
