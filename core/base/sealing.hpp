// Secrets at rest (a channel's credentials): AES-256-GCM through OpenSSL under one data key, kept in a file of its
// own (store.sealing_key_file, default {store.path}/sealing_key, mode 0600), so that it can live apart from the
// data and its backups. Each sealed value is bound to what it belongs to (the associated data): a value copied to
// another record does not open. docs/protocol.md "Sealed credentials" says how to rotate the key.
#pragma once

#include <boost/system/result.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace xconn {

class sealer {
 public:
  // Reads the key file, or creates it with a fresh random key.
  static boost::system::result<sealer, std::string> load(const std::string& key_file);
  explicit sealer(const std::array<unsigned char, 32>& key) : key_(key) {}

  // version 1 | 12-byte random nonce | ciphertext | 16-byte tag.
  std::string seal(std::string_view plain, std::string_view associated) const;
  // nullopt when the value was not sealed by this key for this associated data, or was changed.
  std::optional<std::string> open(std::string_view sealed, std::string_view associated) const;
  // HMAC-SHA256 of label under the key: a key of its own for another purpose (a plugin's consumer keys), from which
  // the data key cannot be read back. Labels of different purposes must differ.
  std::array<unsigned char, 32> derive(std::string_view label) const;

 private:
  std::array<unsigned char, 32> key_;
};

}  // namespace xconn
