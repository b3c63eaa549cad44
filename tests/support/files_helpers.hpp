// What the transfer-plane tests need beside an HTTP client: digests and deterministic bytes, base64 and percent
// decoding, multipart/form-data bodies, signed download URLs taken apart, and an upload streamed piece by piece
// (so that 100 MiB never sits in memory).
#pragma once

#include "support/upload_client.hpp"
#include "support/wire_client.hpp"

#include <boost/json.hpp>
#include <openssl/evp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn::test {

inline const std::string echo_base = "/connectors/echo";
inline const std::string uploads = echo_base + "/files/uploads";
inline const std::string boundary = "xconnFilesBoundary7MA4YWxkTrZu0gW";

inline std::string refs(const std::string& ref) { return echo_base + "/files/refs/" + ref; }
std::int64_t now_ms();

// ---- digests, bytes, encodings ----

class sha256 {
 public:
  sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~sha256() { EVP_MD_CTX_free(ctx_); }
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;
  void update(std::string_view data) { EVP_DigestUpdate(ctx_, data.data(), data.size()); }
  std::string hex();  // lower-case; call once

 private:
  EVP_MD_CTX* ctx_;
};

std::string sha256_of(std::string_view data);

// A fast deterministic byte source (xorshift64*), so that 100 MiB never has to sit in memory.
class byte_source {
 public:
  explicit byte_source(std::uint64_t seed) : s_(seed | 1) {}
  void fill(char* p, std::size_t n);
  std::string bytes(std::size_t n);

 private:
  std::uint64_t next();
  std::uint64_t s_;
};

std::string random_bytes(std::size_t n);  // from a fresh random seed each call
std::string base64(std::string_view in);
std::string percent_decode(std::string_view s);
bool is_lower_hex(std::string_view s, std::size_t n);
bool is_file_ref(const std::string& s);  // "file_" + 32 lower-case hex digits
// A PNG signature followed by random bytes: enough of an "image" for a MIME type to be believable.
std::string png_bytes(std::size_t n = 2048);

// ---- multipart/form-data ----

struct form_part {
  std::string name;
  std::optional<std::string> filename;      // absent: a plain field
  std::optional<std::string> content_type;  // absent: no Content-Type line
  std::string data;
  std::string extra_headers;  // raw header lines, each ending in \r\n
};

form_part file_part(std::string data, std::string filename = "blob.bin",
                    std::optional<std::string> content_type = "application/octet-stream");
form_part field(std::string name, std::string value);
// "--B\r\n<headers>\r\n\r\n": everything of a part before its data.
std::string part_head(const form_part& p, const std::string& b = boundary);
std::string closing(const std::string& b = boundary);
std::string multipart(const std::vector<form_part>& parts, bool close = true, const std::string& b = boundary);
std::string multipart_type(const std::string& b = boundary);

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
signed_url parse_url(const std::string& url);
// One hex digit of s changed (the last one).
std::string tamper(std::string s);

// ---- answers ----

std::string jstr(const boost::json::object& o, const char* key);   // "" when absent or not a string
std::int64_t jint(const boost::json::object& o, const char* key);  // -1 when absent or not an integer
std::string error_of(const http_reply& r);                          // body.error.code, "" when none

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
                              std::chrono::milliseconds deadline = std::chrono::seconds(60));

}  // namespace xconn::test
