// The signature both directions carry (docs/adapters.md "webhook"): X-Xconn-Signature: t=<unix seconds>,v1=<hex
// HMAC-SHA256(secret, "<t>.<raw body>")>, accepted within 300 s either side of now, compared in constant time.
#pragma once

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace webhook {

inline constexpr std::int64_t signature_window_s = 300;

// Lowercase hex of HMAC-SHA256(secret, "<t>.<body>"), the body fed as it is (no copy of up to 1 MiB).
inline std::string signature_hex(std::string_view secret, std::int64_t t, std::string_view body) {
  // Fetched per call (OpenSSL caches the method): a static one would leak each time the library is unloaded.
  EVP_MAC* hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (!hmac) return "";
  char digest_name[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0), OSSL_PARAM_construct_end()};
  unsigned char digest[EVP_MAX_MD_SIZE];
  std::size_t size = 0;
  auto prefix = std::to_string(t) + ".";
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(hmac);
  bool ok = ctx && EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), params) == 1 &&
            EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(prefix.data()), prefix.size()) == 1 &&
            EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(body.data()), body.size()) == 1 &&
            EVP_MAC_final(ctx, digest, &size, sizeof digest) == 1;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(hmac);
  if (!ok) return "";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) out += "0123456789abcdef"[digest[i] >> 4], out += "0123456789abcdef"[digest[i] & 15];
  return out;
}

// The header's value for a body signed at t.
inline std::string signature_header(std::string_view secret, std::int64_t t, std::string_view body) {
  return "t=" + std::to_string(t) + ",v1=" + signature_hex(secret, t, body);
}

// The header's parts: t and every v1 (a sender rotating its secret may send two). nullopt when malformed.
struct signature_parts {
  std::int64_t t = 0;
  std::vector<std::string> v1;
};
inline std::optional<signature_parts> parse_signature(std::string_view header) {
  signature_parts parts;
  bool have_t = false;
  if (header.size() > 1024) return std::nullopt;
  while (!header.empty()) {
    auto comma = header.find(',');
    auto item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.starts_with("t=")) {
      auto digits = item.substr(2);
      if (have_t || digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
      parts.t = std::stoll(std::string(digits));
      have_t = true;
    } else if (item.starts_with("v1=")) {
      auto hex = item.substr(3);
      if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) return std::nullopt;
      std::string lower(hex);
      for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
      parts.v1.push_back(std::move(lower));
    }  // other schemes (v0, ...) are ignored, as a newer sender may add one
  }
  if (!have_t || parts.v1.empty() || parts.v1.size() > 4) return std::nullopt;
  return parts;
}

enum class signature_check { ok, malformed, outside_window, mismatch };

// Whether header signs body with secret at a t within the window of now_s.
inline signature_check check_signature(std::string_view header, std::string_view secret, std::string_view body,
                                       std::int64_t now_s) {
  auto parts = parse_signature(header);
  if (!parts) return signature_check::malformed;
  if (parts->t > now_s + signature_window_s || parts->t < now_s - signature_window_s)
    return signature_check::outside_window;
  auto want = signature_hex(secret, parts->t, body);
  bool match = false;
  for (const auto& given : parts->v1)  // every one is compared, so the time says nothing of which matched
    match |= want.size() == given.size() && CRYPTO_memcmp(want.data(), given.data(), want.size()) == 0;
  return match ? signature_check::ok : signature_check::mismatch;
}

}  // namespace webhook
