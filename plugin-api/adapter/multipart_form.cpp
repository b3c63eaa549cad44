#include <xconn/adapter/http_client.hpp>

#include <openssl/rand.h>

namespace xconn::adapter {
namespace {

std::string random_boundary() {
  unsigned char raw[12];
  RAND_bytes(raw, sizeof raw);
  std::string out = "xconn-";
  for (unsigned char c : raw) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

// A name or file name inside a quoted header parameter: quotes, backslashes and line breaks become '_'.
std::string quoted_safe(std::string_view text) {
  std::string out;
  for (char c : text) out += (c == '"' || c == '\r' || c == '\n' || c == '\\') ? '_' : c;
  return out;
}

}  // namespace

multipart_form::multipart_form() : boundary_(random_boundary()) {}

void multipart_form::field(std::string_view name, std::string_view value) {
  body_ += "--" + boundary_ + "\r\nContent-Disposition: form-data; name=\"" + quoted_safe(name) + "\"\r\n\r\n";
  body_ += value;
  body_ += "\r\n";
}

void multipart_form::file(std::string_view name, std::string_view filename, std::string_view mime_type,
                          std::string_view bytes) {
  body_.reserve(body_.size() + bytes.size() + 256);
  body_ += "--" + boundary_ + "\r\nContent-Disposition: form-data; name=\"" + quoted_safe(name) + "\"; filename=\"" +
           quoted_safe(filename) + "\"\r\nContent-Type: " + quoted_safe(mime_type) + "\r\n\r\n";
  body_ += bytes;
  body_ += "\r\n";
}

http_request multipart_form::post(std::string target) {
  body_ += "--" + boundary_ + "--\r\n";
  http_request req{boost::beast::http::verb::post, std::move(target), "multipart/form-data; boundary=" + boundary_,
                   std::move(body_), {}};
  body_.clear();
  return req;
}

}  // namespace xconn::adapter
