// OpenSSL EVP under the iLink helpers of ilink_crypto.hpp. PKCS#7 is checked here rather than by EVP so that every
// failure is one nullopt, whatever OpenSSL's version reports.
#include "ilink_crypto.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace wechat {
namespace {

constexpr std::size_t block = 16;

using cipher_ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

// One ECB pass with padding off: in.size() is a multiple of 16, the result as long.
std::optional<std::string> ecb(std::string_view key16, std::string_view in, bool encrypt) {
  cipher_ctx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (!ctx) return std::nullopt;
  auto key = reinterpret_cast<const unsigned char*>(key16.data());
  if (EVP_CipherInit_ex(ctx.get(), EVP_aes_128_ecb(), nullptr, key, nullptr, encrypt ? 1 : 0) != 1) return std::nullopt;
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  std::string out(in.size() + block, '\0');
  int written = 0;
  int tail = 0;
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  // EVP takes an int length: large bodies go through in chunks.
  constexpr std::size_t chunk = 1 << 30;
  std::size_t done = 0;
  for (std::size_t at = 0; at < in.size(); at += chunk) {
    auto n = std::min(chunk, in.size() - at);
    if (EVP_CipherUpdate(ctx.get(), dst + done, &written, reinterpret_cast<const unsigned char*>(in.data() + at),
                         static_cast<int>(n)) != 1)
      return std::nullopt;
    done += static_cast<std::size_t>(written);
  }
  if (EVP_CipherFinal_ex(ctx.get(), dst + done, &tail) != 1) return std::nullopt;
  out.resize(done + static_cast<std::size_t>(tail));
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_digit(char c) {
  auto at = alphabet.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

}  // namespace

std::optional<std::string> aes_ecb_decrypt(std::string_view key16, std::string_view cipher) {
  if (key16.size() != block || cipher.empty() || cipher.size() % block != 0) return std::nullopt;
  auto plain = ecb(key16, cipher, false);
  if (!plain || plain->size() != cipher.size()) return std::nullopt;
  auto pad = static_cast<unsigned char>(plain->back());
  if (pad == 0 || pad > block) return std::nullopt;
  for (std::size_t k = plain->size() - pad; k < plain->size(); ++k)
    if (static_cast<unsigned char>((*plain)[k]) != pad) return std::nullopt;
  plain->resize(plain->size() - pad);
  return plain;
}

std::string aes_ecb_encrypt(std::string_view key16, std::string_view plain) {
  if (key16.size() != block) throw std::invalid_argument("AES-128 needs a 16-byte key");
  std::string padded(plain);
  auto pad = cipher_size(plain.size()) - plain.size();
  padded.append(pad, static_cast<char>(pad));
  auto out = ecb(key16, padded, true);
  if (!out) throw std::runtime_error("AES-128-ECB encryption failed");
  return std::move(*out);
}

std::optional<std::string> hex_key(std::string_view hex32) {
  if (hex32.size() != 2 * block) return std::nullopt;
  std::string key;
  key.reserve(block);
  for (std::size_t i = 0; i < hex32.size(); i += 2) {
    int high = hex_digit(hex32[i]), low = hex_digit(hex32[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    key.push_back(static_cast<char>(high * 16 + low));
  }
  return key;
}

std::optional<std::string> media_key(std::string_view aes_key_b64) {
  if (auto raw = unbase64(aes_key_b64)) {
    if (raw->size() == block) return raw;
    if (auto key = hex_key(*raw)) return key;
  }
  // 32 hex characters are also well-formed base64 (of 24 bytes): a bare hex key is read as hex.
  return hex_key(aes_key_b64);
}

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0xF]);
  }
  return out;
}

std::string md5_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_md5(), nullptr) != 1)
    throw std::runtime_error("MD5 failed");
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest), size));
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("no random bytes");
  return out;
}

std::string wechat_uin() {
  auto bytes = random_bytes(sizeof(std::uint32_t));
  std::uint32_t uin = 0;
  for (unsigned char c : bytes) uin = (uin << 8) | c;
  return base64(std::to_string(uin));
}

std::string base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t group = static_cast<unsigned char>(bytes[i]) << 16;
    auto left = bytes.size() - i;
    if (left > 1) group |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (left > 2) group |= static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(alphabet[(group >> 18) & 63]);
    out.push_back(alphabet[(group >> 12) & 63]);
    out.push_back(left > 1 ? alphabet[(group >> 6) & 63] : '=');
    out.push_back(left > 2 ? alphabet[group & 63] : '=');
  }
  return out;
}

std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::size_t pads = 0;
    if (last) pads = text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0;
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      int d = k >= 4 - pads ? 0 : base64_digit(text[i + k]);
      if (d < 0) return std::nullopt;
      group = (group << 6) | static_cast<std::uint32_t>(d);
    }
    out.push_back(static_cast<char>(group >> 16));
    if (pads < 2) out.push_back(static_cast<char>((group >> 8) & 0xFF));
    if (pads < 1) out.push_back(static_cast<char>(group & 0xFF));
    // Bits the padding leaves over must be zero: one text per byte string.
    if ((pads == 1 && (group & 0xFF) != 0) || (pads == 2 && (group & 0xFFFF) != 0)) return std::nullopt;
  }
  return out;
}

}  // namespace wechat
