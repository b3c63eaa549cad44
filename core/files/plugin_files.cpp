#include "core/files/plugin_files.hpp"

#include <future>

namespace xconn {

xconn_file_upload* plugin_files::begin(const std::string& plugin_id, std::string_view channel_id,
                                       std::string_view filename, std::string_view mime_type) {
  if (!owns_(plugin_id, channel_id)) return nullptr;
  return new xconn_file_upload{files_.begin(plugin_id, std::string(channel_id), filename, mime_type), nullptr};
}

bool plugin_files::write(xconn_file_upload& upload, std::string_view bytes) {
  if (!upload.writer->append(bytes)) return false;
  if (upload.writer->backlogged()) {
    std::promise<void> caught_up;
    auto ready = caught_up.get_future();
    upload.writer->when_drained([&caught_up] { caught_up.set_value(); });
    ready.wait();
  }
  return true;
}

int plugin_files::write_nowait(xconn_file_upload& upload, std::string_view bytes, std::function<void()> ready) {
  if (upload.ready_pending->load()) return -2;
  if (!upload.writer->append(bytes)) return -1;
  if (!upload.writer->backlogged()) return 0;
  upload.ready_pending->store(true);
  // The flag outlives the handle: end may free it before the store drains.
  upload.writer->when_drained([pending = upload.ready_pending, ready = std::move(ready)] {
    pending->store(false);
    ready();
  });
  return 1;
}

void plugin_files::end(xconn_file_upload* upload, bool keep, file_store::file_done done) {
  std::unique_ptr<xconn_file_upload> owned(upload);
  if (keep) return owned->writer->finish(std::move(done));
  owned->writer->abort();
  done(boost::system::result<stored_file, std::string>(boost::system::in_place_error, "discarded"));
}

std::int64_t plugin_files::read(std::string_view plugin_id, std::string_view channel_id, std::string_view file_ref,
                                std::uint64_t offset, char* out, std::size_t capacity) {
  auto f = files_.find_on(plugin_id, channel_id, file_ref);
  if (!f) return -1;
  auto n = files_.read(*f, offset, out, capacity);
  return n ? static_cast<std::int64_t>(*n) : -1;
}

std::optional<stored_file> plugin_files::describe(std::string_view plugin_id, std::string_view channel_id,
                                                  std::string_view file_ref) const {
  return files_.find_on(plugin_id, channel_id, file_ref);
}
int plugin_files::remove(std::string_view plugin_id, std::string_view channel_id, std::string_view file_ref) {
  // Ownership is the record's (plugin and channel of its upload), checked before anything is erased; a ref the
  // plugin did not keep there is refused alike whether it exists or not.
  if (!files_.find_on(plugin_id, channel_id, file_ref)) return -1;
  std::promise<file_store::remove_outcome> outcome;
  auto removed = outcome.get_future();
  files_.remove(file_ref, [&outcome](file_store::remove_outcome o) { outcome.set_value(o); });
  switch (removed.get()) {
    case file_store::remove_outcome::removed: return 0;
    case file_store::remove_outcome::not_found: return -1;  // a concurrent delete or the collector was first
    case file_store::remove_outcome::store_failed: break;
  }
  return -2;
}

}  // namespace xconn
