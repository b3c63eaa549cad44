#include "core/plugin_host/consumer_key.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace xconn {

std::string consumer_key_maker::key(std::string_view plugin_id, std::string_view material) const {
  if (material.empty() || material.size() > max_material_bytes) return {};
  // The NUL ends the label: no plugin id can make another purpose's label.
  std::string label("xconn consumer key", sizeof("xconn consumer key"));
  label.append(plugin_id);
  const auto k_plugin = seal_.derive(label);
  unsigned char digest[32];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), k_plugin.data(), static_cast<int>(k_plugin.size()),
            reinterpret_cast<const unsigned char*>(material.data()), material.size(), digest, &size) ||
      size != sizeof digest)
    throw std::runtime_error("HMAC-SHA256 failed");
  std::string out;
  out.reserve(key_chars);
  for (unsigned char b : digest) out += "0123456789abcdef"[b >> 4], out += "0123456789abcdef"[b & 15];
  return out;
}

}  // namespace xconn
