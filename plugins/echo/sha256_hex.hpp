// SHA-256 and HMAC-SHA256 as lowercase hex, through OpenSSL's libcrypto (the host links the same Debian library).
#pragma once

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace echo {

inline std::string digest_hex(const unsigned char* digest, unsigned int size) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 0x0F]);
  }
  return out;
}

inline std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sha256 failed");
  }
  return digest_hex(digest, size);
}

inline std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), digest, &size)) {
    throw std::runtime_error("hmac-sha256 failed");
  }
  return digest_hex(digest, size);
}

}  // namespace echo
