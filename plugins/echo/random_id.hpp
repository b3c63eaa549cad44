// Unguessable ids (QR codes, message ids) from OpenSSL's CSPRNG: a QR code is a login credential while it lives.
#pragma once

#include <openssl/rand.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace echo {

// length characters of [0-9A-Za-z]; 22 of them carry more than 128 bits.
inline std::string random_base62(std::size_t length) {
  static constexpr char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out;
  out.reserve(length);
  unsigned char buffer[64];
  while (out.size() < length) {
    if (RAND_bytes(buffer, sizeof buffer) != 1) throw std::runtime_error("no randomness available");
    for (unsigned char byte : buffer) {
      // 248 = 4 * 62: dropping the bytes above it keeps every character equally likely.
      if (byte < 248 && out.size() < length) out.push_back(alphabet[byte % 62]);
    }
  }
  return out;
}

}  // namespace echo
