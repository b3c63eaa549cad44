// The byte work of WeChat's iLink protocol, with no I/O: the CDN's AES-128-ECB (PKCS#7) media encryption, the media
// keys a message carries (base64 of 16 raw bytes or of their 32 hex characters, or an image's bare hex), the MD5 and
// hex an upload names, strict base64, and the fresh X-WECHAT-UIN header of every bot call.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace wechat {

// The plaintext of a CDN body, or nullopt when the key is not 16 bytes, the body is not whole 16-byte blocks or
// its PKCS#7 padding does not check (a wrong key almost always ends here).
std::optional<std::string> aes_ecb_decrypt(std::string_view key16, std::string_view cipher);

// A body for a CDN upload: cipher_size(plain.size()) bytes. Throws std::invalid_argument for a key that is not 16
// bytes (a caller's mistake: keys come from random_bytes(16) or media_key).
std::string aes_ecb_encrypt(std::string_view key16, std::string_view plain);

// The size of a padded body: PKCS#7 always adds 1..16 bytes.
constexpr std::size_t cipher_size(std::size_t plain) { return (plain / 16 + 1) * 16; }

// A CDNMedia's aes_key as the 16 raw key bytes: base64 of the raw key, or base64 of its 32 hex characters (both
// forms are in use), or the 32 hex characters themselves; nullopt for anything else.
std::optional<std::string> media_key(std::string_view aes_key_b64);

// image_item.aeskey: exactly 32 hex characters (either case) as 16 raw bytes; nullopt otherwise.
std::optional<std::string> hex_key(std::string_view hex32);

std::string md5_hex(std::string_view data);  // lower-case, 32 characters
std::string to_hex(std::string_view bytes);  // lower-case, two characters a byte

// n bytes from OpenSSL's CSPRNG; throws std::runtime_error when it has none to give.
std::string random_bytes(std::size_t n);

// X-WECHAT-UIN: a fresh random uint32 as decimal text, in standard base64.
std::string wechat_uin();

// Standard base64 (RFC 4648, with padding).
std::string base64(std::string_view bytes);
// Strict: the standard alphabet, whole 4-character groups, '=' only as the last one or two, no whitespace, no
// stray bits after the last byte; nullopt otherwise. "" decodes to "".
std::optional<std::string> unbase64(std::string_view text);

}  // namespace wechat
