// The file store as a plugin sees it (plugin.h, ABI 1.2): files of its own channels only. A write waits while
// the store is behind, which bounds what an attachment holds in memory; plugins call it from their own threads.
#pragma once

#include "core/files/file_store.hpp"

#include <boost/system/result.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace xconn {
class plugin_generation;
}

// The opaque handle of plugin.h: one file a plugin is storing.
struct xconn_file_upload {
  std::shared_ptr<xconn::file_store::writer> writer;
  std::shared_ptr<xconn::plugin_generation> from;  // the plugin stays loaded until its callback has run
  std::shared_ptr<std::atomic<bool>> ready_pending = std::make_shared<std::atomic<bool>>(false);  // write_nowait
};

namespace xconn {

class plugin_files {
 public:
  // Whether the channel exists and belongs to the plugin.
  using channel_check = std::function<bool(std::string_view plugin_id, std::string_view channel_id)>;

  plugin_files(file_store& files, channel_check owns) : files_(files), owns_(std::move(owns)) {}

  // nullptr when the channel is not one of the plugin's.
  xconn_file_upload* begin(const std::string& plugin_id, std::string_view channel_id, std::string_view filename,
                           std::string_view mime_type);
  // False once the file is over files.max_bytes or the store failed.
  bool write(xconn_file_upload& upload, std::string_view bytes);
  // The same without waiting: 0 taken, 1 taken and ready runs once when the store has room (maybe at once), -1 as
  // write's false, -2 while a ready is pending (not taken).
  int write_nowait(xconn_file_upload& upload, std::string_view bytes, std::function<void()> ready);
  // Keeps (or discards) the file and frees the handle; done runs once, on the store's thread or right here.
  void end(xconn_file_upload* upload, bool keep, file_store::file_done done);
  // Bytes read (0 at the end), or -1 when the file is not one of the channel's.
  std::int64_t read(std::string_view plugin_id, std::string_view channel_id, std::string_view file_ref,
                    std::uint64_t offset, char* out, std::size_t capacity);
  // The stored record of a file of the plugin's channel (plugin.h xconn_host_file_info): its name, type and size;
  // nullopt for anything read() refuses.
  std::optional<stored_file> describe(std::string_view plugin_id, std::string_view channel_id,
                                      std::string_view file_ref) const;
  // Deletes a kept file of the plugin's channel (plugin.h xconn_host_file_delete) and waits for the commit: 0
  // removed, -1 not a kept file of that channel of that plugin (or gone already), -2 the store failed (it stays).
  int remove(std::string_view plugin_id, std::string_view channel_id, std::string_view file_ref);

 private:
  file_store& files_;
  channel_check owns_;
};

}  // namespace xconn
