// The transfer plane's file store (docs/protocol.md "Files"): files live in LMDB as a record plus fixed-size chunks, so
// no file is ever whole in memory. Uploads (HTTP or a plugin) write chunk by chunk through the store's writer
// with a bounded backlog; downloads read chunk by chunk. Files expire after files.ttl_s; the collector and
// deletes erase them in small batches so no other writer waits behind a large file.
#pragma once

#include "core/base/config.hpp"
#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
#include "core/store/store.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

struct stored_file {
  std::string file_ref;
  std::string plugin_id;
  std::string channel_id;  // a file_ref is bound to the channel it was uploaded on
  std::string filename;
  std::string mime_type;
  std::string sha256;      // lowercase hex of the bytes
  std::uint64_t byte_size = 0;
  long long created_at = 0;  // unix ms
  long long expires_at = 0;  // unix ms
  bool complete = false;     // false while its upload runs; a crash leaves it for load() to drop

  std::string type() const;  // the IM file item type: image, video, audio or file
  // The IM file item ({type, file_ref, filename, mime_type, byte_size, expires_at}), without download_url.
  boost::json::object item() const;
  std::string to_record() const;
  static std::optional<stored_file> from_record(std::string_view file_ref, std::string_view json);
};

// "file_" + 32 lowercase hex: anything else names no file (and is never used as a key).
bool valid_file_ref(std::string_view file_ref);
// The last path component, without control characters, at most 255 bytes; "file" when nothing is left.
std::string clean_filename(std::string_view filename);
// A sent MIME type, trimmed, if it is printable ASCII with a '/' and at most 255 bytes; "" otherwise.
std::string clean_mime_type(std::string_view mime_type);
// The MIME type a file name suggests (a short list of common types), else application/octet-stream.
std::string mime_type_for(std::string_view filename);

// What the message services need of the files, without depending on the store: the IM item of a file that belongs
// to a plugin's channel (nullopt otherwise), and a freshly signed absolute download URL.
struct file_lookup {
  std::function<std::optional<boost::json::object>(std::string_view plugin_id, std::string_view channel_id,
                                                   std::string_view file_ref)>
      item;
  std::function<std::string(std::string_view plugin_id, std::string_view file_ref)> download_url;
  // Removes a file of the plugin's channel (one named by an emit that was refused); any other ref is left alone.
  std::function<void(std::string_view plugin_id, std::string_view channel_id, std::string_view file_ref)> discard;
};

class file_store {
 public:
  static constexpr std::string_view files_db = "files";
  static constexpr std::string_view chunks_db = "file_chunks";
  static constexpr std::string_view by_channel_db = "files_by_channel";  // "{channel_id}/{file_ref}" -> ""
  static constexpr std::size_t chunk_bytes = 64 * 1024;
  static constexpr std::size_t max_chunks_queued = 64;  // per upload: 4 MiB waits for the store at most
  using now_fn = std::function<long long()>;            // unix ms
  using file_done = std::function<void(boost::system::result<stored_file, std::string>)>;

  file_store(store& db, const files_config& cfg, now_fn now = unix_ms);

  // Drops what a crash interrupted (uploads without their final record, chunks without a record); returns the
  // number of files kept. Before anything is served.
  std::size_t load();

  class writer;
  // Starts a file on a channel. filename and mime_type are cleaned; an unusable mime_type is guessed from the name.
  std::shared_ptr<writer> begin(std::string plugin_id, std::string channel_id, std::string_view filename,
                                std::string_view mime_type);

  // A complete file that has not expired; nullopt otherwise (and for any malformed ref).
  std::optional<stored_file> find(std::string_view file_ref) const;
  // The same, only when it belongs to that plugin's channel.
  std::optional<stored_file> find_on(std::string_view plugin_id, std::string_view channel_id,
                                     std::string_view file_ref) const;
  // Chunk index of a file (chunk_bytes each, the last one shorter); nullopt when it is gone.
  std::optional<std::string> chunk(std::string_view file_ref, std::uint64_t index) const;
  // Up to capacity bytes from offset; 0 at the end; nullopt when the file is gone.
  std::optional<std::size_t> read(const stored_file& f, std::uint64_t offset, char* out, std::size_t capacity) const;

  // Erases a file (record first: it is gone for readers at once). done(not_found) when there was none,
  // done(store_failed) when the erase could not be committed (the file stays).
  enum class remove_outcome { removed, not_found, store_failed };
  void remove(std::string_view file_ref, std::function<void(remove_outcome)> done = {});
  // Files bound to channels that were deregistered.
  void drop_channels(const std::vector<std::string>& channel_ids);
  // Starts erasing every expired file; returns how many.
  std::size_t collect();
  // Runs collect periodically (every files.ttl_s, at most a minute apart) until stop.
  void start(boost::asio::io_context& io);
  void stop();

  long long now() const { return now_(); }
  const files_config& settings() const { return cfg_; }

 private:
  void erase_chunks(std::string_view file_ref, std::uint64_t count);
  void schedule();

  store& db_;
  const files_config& cfg_;
  now_fn now_;
  std::unique_ptr<boost::asio::steady_timer> collector_;
};

// One file being written. Feed it from one thread at a time; completions run on the store's writer thread.
class file_store::writer : public std::enable_shared_from_this<writer> {
 public:
  writer(file_store& files, stored_file meta);
  ~writer();  // an unfinished file is erased
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;

  // Appends bytes. False once the file passes files.max_bytes or a chunk failed to store (nothing is kept then).
  bool append(std::string_view bytes);
  bool too_large() const { return too_large_; }
  std::uint64_t size() const { return meta_.byte_size; }
  const std::string& file_ref() const { return meta_.file_ref; }
  // True while more than max_chunks_queued chunks wait for the store: stop feeding until the resume runs.
  bool backlogged() const;
  // Runs resume once the backlog has halved (at once when there is none), on the store's writer thread.
  void when_drained(std::function<void()> resume);
  // Stores the rest and the final record; done gets the file once it is durable, or an error code
  // (payload_too_large, store_failed, already_finished).
  void finish(file_done done);
  // Drops the file; what was written is erased.
  void abort();

 private:
  void store_chunk(std::string bytes);
  void on_stored(std::error_code ec);

  file_store& files_;
  stored_file meta_;
  sha256_stream digest_;
  std::string pending_;  // bytes of the next chunk
  std::uint64_t chunks_ = 0;
  bool too_large_ = false;
  bool ended_ = false;   // finished or aborted

  mutable std::mutex mutex_;  // guards what completions touch
  std::size_t queued_ = 0;
  bool failed_ = false;
  std::function<void()> resume_;
};

}  // namespace xconn
