// A file of reserved disk space beside the store ({store.path}/reserve). When the disk fills, releasing it gives
// the store room to delete: LMDB writes new pages even to erase (copy on write), so without room a full store
// could never be emptied. Taken again once that much is free.
#pragma once

#include <cstdint>
#include <string>

namespace xconn {

class disk_reserve {
 public:
  disk_reserve(std::string path, std::uint64_t bytes) : path_(std::move(path)), bytes_(bytes) {}

  // Allocates the whole reserve (real blocks, not a sparse file); false, leaving no partial file, when the disk
  // has not that much free. True at once when it is already held or its size is 0. False too when the path holds
  // something else than a regular file (a FIFO, a socket, a device, a folder, a symbolic link) or cannot be opened;
  // then error() says so, and that file is left in place.
  bool take();
  // Why the last take() failed other than for space; empty when it was space (or it did not fail).
  const std::string& error() const { return error_; }
  // Deletes the file: its blocks are free for the store.
  void release();
  bool held() const { return held_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::string path_;
  std::uint64_t bytes_;
  bool held_ = false;
  std::string error_;
};

}  // namespace xconn
