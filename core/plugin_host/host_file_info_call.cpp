// The plugin's xconn_host_file_info (plugin.h, since 1.7): C arguments in, the stored record's name, type and size
// out. The plugin is named by its generation, never by an argument, so a plugin only ever learns of files of its
// own channels (the same rule as xconn_host_file_read).
#include "core/files/plugin_files.hpp"
#include "core/plugin_host/plugin_generation.hpp"

namespace xconn {

int plugin_generation::on_host_file_info(void* ctx, xconn_str channel_id, xconn_str file_ref,
                                         xconn_file_info_visit visit, void* user) {
  auto* self = static_cast<plugin_generation*>(ctx);
  if (!self->hooks_.files || !channel_id.data || !file_ref.data || !visit) return -1;
  auto f = self->hooks_.files->describe(self->id(), {channel_id.data, channel_id.size}, {file_ref.data, file_ref.size});
  if (!f) return -1;
  visit(user, {f->filename.data(), f->filename.size()}, {f->mime_type.data(), f->mime_type.size()}, f->byte_size);
  return 0;
}

}  // namespace xconn
