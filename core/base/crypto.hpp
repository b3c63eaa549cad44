// Digests and comparisons with libcrypto (OpenSSL): no hand-rolled cryptography.
#pragma once

#include <string>
#include <string_view>

namespace xconn {

std::string sha256_hex(std::string_view data);

// Equal in time that depends only on the lengths of the digests, not on where a and b differ.
bool constant_time_equal(std::string_view a, std::string_view b);

// HMAC-SHA256 of data under key, as lowercase hex.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

// A sha256 fed piece by piece (a file that never sits whole in memory).
class sha256_stream {
 public:
  sha256_stream();
  ~sha256_stream();
  sha256_stream(const sha256_stream&) = delete;
  sha256_stream& operator=(const sha256_stream&) = delete;
  void update(std::string_view data);
  std::string final_hex();  // once

 private:
  void* ctx_;  // EVP_MD_CTX
};

}  // namespace xconn
