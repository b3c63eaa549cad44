// The plugin's xconn_host_file_delete (plugin.h, since 1.5): C arguments in, plugin_files' answer out. The plugin is
// named by its generation, never by an argument, so a plugin can only ever delete files of its own channels.
#include "core/files/plugin_files.hpp"
#include "core/plugin_host/plugin_generation.hpp"

namespace xconn {

int plugin_generation::on_host_file_delete(void* ctx, xconn_str channel_id, xconn_str file_ref) {
  auto* self = static_cast<plugin_generation*>(ctx);
  if (!self->hooks_.files || !channel_id.data || !file_ref.data) return -1;
  return self->hooks_.files->remove(self->id(), {channel_id.data, channel_id.size}, {file_ref.data, file_ref.size});
}

}  // namespace xconn
