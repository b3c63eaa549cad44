// Strict base64 (RFC 4648 §4, padded, no whitespace) through OpenSSL, for /inject's test attachments.
#pragma once

#include <openssl/evp.h>

#include <optional>
#include <string>
#include <string_view>

namespace echo {

inline std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    bool padding = c == '=' && i + 2 >= text.size() && (i + 1 == text.size() || text[i + 1] == '=');
    if (!alphabet && !padding) return std::nullopt;
  }
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the bytes that padding stands for as zeros.
  std::size_t pad = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : !text.empty() && text.back() == '=' ? 1 : 0;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

}  // namespace echo
