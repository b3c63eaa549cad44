// The plugin's xconn_host_consumer_key (plugin.h, since 1.5): C arguments in, the key from the host's hook out. The
// material is a credential: it is neither kept nor logged.
#include "core/plugin_host/plugin_generation.hpp"

#include <cstring>

namespace xconn {

int plugin_generation::on_host_consumer_key(void* ctx, xconn_str material, char* out, size_t capacity) {
  auto* self = static_cast<plugin_generation*>(ctx);
  if (!self->hooks_.consumer_key || !out || (!material.data && material.size)) return -1;
  auto key = self->hooks_.consumer_key(self->id(), std::string_view(material.data ? material.data : "", material.size));
  if (key.empty() || capacity < key.size()) return -1;
  std::memcpy(out, key.data(), key.size());
  return static_cast<int>(key.size());
}

}  // namespace xconn
