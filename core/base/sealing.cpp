#include "core/base/sealing.hpp"

#include "core/base/ids.hpp"
#include "core/base/secret_file.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>

namespace xconn {
namespace {

constexpr unsigned char version = 1;
constexpr std::size_t nonce_bytes = 12;
constexpr std::size_t tag_bytes = 16;

using cipher_ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

boost::system::result<sealer, std::string> sealer::load(const std::string& key_file) {
  auto text = read_or_create_secret_file(key_file, [] { return random_hex(32); }, 64);
  if (!text) return text.error();
  if (text->size() != 64) return key_file + " holds no usable key (64 lowercase hex digits)";
  std::array<unsigned char, 32> key{};
  for (std::size_t i = 0; i < key.size(); ++i) {
    int hi = hex_digit((*text)[2 * i]), lo = hex_digit((*text)[2 * i + 1]);
    if (hi < 0 || lo < 0) return key_file + " holds no usable key (64 lowercase hex digits)";
    key[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return sealer(key);
}

std::string sealer::seal(std::string_view plain, std::string_view associated) const {
  std::string out(1 + nonce_bytes + plain.size() + tag_bytes, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  o[0] = version;
  if (RAND_bytes(o + 1, nonce_bytes) != 1) throw std::runtime_error("RAND_bytes failed");
  cipher_ctx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int n = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key_.data(), o + 1) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &n, bytes(associated), static_cast<int>(associated.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), o + 1 + nonce_bytes, &n, bytes(plain), static_cast<int>(plain.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), o + 1 + nonce_bytes + n, &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, tag_bytes, o + 1 + nonce_bytes + plain.size()) != 1)
    throw std::runtime_error("AES-256-GCM sealing failed");
  return out;
}

std::optional<std::string> sealer::open(std::string_view sealed, std::string_view associated) const {
  if (sealed.size() < 1 + nonce_bytes + tag_bytes || static_cast<unsigned char>(sealed[0]) != version)
    return std::nullopt;
  const auto* s = bytes(sealed);
  std::size_t length = sealed.size() - 1 - nonce_bytes - tag_bytes;
  std::string plain(length, '\0');
  auto* p = reinterpret_cast<unsigned char*>(plain.data());
  unsigned char tag[tag_bytes];
  std::copy(s + 1 + nonce_bytes + length, s + sealed.size(), tag);
  cipher_ctx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int n = 0;
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key_.data(), s + 1) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &n, bytes(associated), static_cast<int>(associated.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), p, &n, s + 1 + nonce_bytes, static_cast<int>(length)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, tag_bytes, tag) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), p + n, &n) != 1)
    return std::nullopt;  // a wrong key, another record's value, or changed bytes: the tag does not match
  return plain;
}

std::array<unsigned char, 32> sealer::derive(std::string_view label) const {
  std::array<unsigned char, 32> out{};
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), bytes(label), label.size(), out.data(), &size) ||
      size != out.size())
    throw std::runtime_error("HMAC-SHA256 failed");
  return out;
}

}  // namespace xconn
