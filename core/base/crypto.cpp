#include "core/base/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>

namespace xconn {
namespace {

std::array<unsigned char, 32> sha256(std::string_view data) {
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

std::string to_hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(hex[bytes[i] >> 4]);
    out.push_back(hex[bytes[i] & 15]);
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  auto d = sha256(data);
  return to_hex(d.data(), d.size());
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out.data(), &len);
  return to_hex(out.data(), len);
}

sha256_stream::sha256_stream() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}

sha256_stream::~sha256_stream() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void sha256_stream::update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

std::string sha256_stream::final_hex() {
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len);
  return to_hex(out.data(), len);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Comparing fixed-size digests hides the length of the secret as well as its content.
  auto da = sha256(a);
  auto db = sha256(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

}  // namespace xconn
