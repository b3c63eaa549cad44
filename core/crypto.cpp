#include "core/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>

namespace xconn {
namespace {

std::array<unsigned char, 32> sha256(std::string_view data) {
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : sha256(data)) {
    out.push_back(hex[b >> 4]);
    out.push_back(hex[b & 15]);
  }
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Comparing fixed-size digests hides the length of the secret as well as its content.
  auto da = sha256(a);
  auto db = sha256(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

}  // namespace xconn
