// The key that names a plugin's shared consumer (plugin.h xconn_host_consumer_key): an HMAC of what identifies the
// consumer (a credential and what it reaches) under a key of that plugin, derived from the store's sealing key.
// The key is stored in LMDB and in every backup; the sealing key is in neither (store.sealing_key_file), so a
// stored key cannot be checked against a guessed password or token, two plugins never share a key, and the same
// material gives the same key after a restart.
#pragma once

#include "core/base/sealing.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace xconn {

class consumer_key_maker {
 public:
  static constexpr std::size_t key_chars = 64;             // lowercase hex of an HMAC-SHA256
  static constexpr std::size_t max_material_bytes = 65536;  // what identifies a consumer is small; more is a bug

  explicit consumer_key_maker(const sealer& seal) : seal_(seal) {}

  // HMAC-SHA256(k_plugin, material) as 64 lowercase hex digits, k_plugin = HMAC-SHA256(sealing key,
  // "xconn consumer key\0" + plugin_id); "" when material is empty or over max_material_bytes.
  std::string key(std::string_view plugin_id, std::string_view material) const;

 private:
  const sealer& seal_;
};

}  // namespace xconn
