// The key a plugin names a shared consumer by (host.acquire_consumer): the host's HMAC of what identifies the
// consumer (plugin.h xconn_host_consumer_key), under a key derived from the store's sealing key, so a key kept in
// the store or a backup cannot be checked against a guessed password or token. Builds before ABI 1.5 kept a bare
// SHA-256 instead; a plugin that finds a channel again at restore computes that form only to release it.
#pragma once

#include <xconn/plugin.hpp>

#include <openssl/sha.h>

#include <string>
#include <string_view>

namespace xconn::kit {

// What builds before ABI 1.5 stored: prefix + the first 16 hex digits of sha256(material).
inline std::string legacy_consumer_key(std::string_view prefix, std::string_view material) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(material.data()), material.size(), digest);
  std::string out(prefix);
  for (int i = 0; i < 8; ++i) out += "0123456789abcdef"[digest[i] >> 4], out += "0123456789abcdef"[digest[i] & 15];
  return out;
}

// prefix + the host's 64 hex digits for material. A host older than 1.5 has no such call: the legacy form then,
// which that host's store held anyway, so the plugin still tells its consumers apart.
inline std::string consumer_key(const xconn::sdk::host& host, std::string_view prefix, std::string_view material) {
  auto key = host.consumer_key(material);
  if (key.empty()) return legacy_consumer_key(prefix, material);
  return std::string(prefix) + key;
}

}  // namespace xconn::kit
