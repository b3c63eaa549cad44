#include "core/store/disk_reserve.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace xconn {

bool disk_reserve::take() {
  if (held_ || bytes_ == 0) return held_ = true;
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  bool ok = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes_)) == 0;
  ::close(fd);
  if (!ok) ::unlink(path_.c_str());
  return held_ = ok;
}

void disk_reserve::release() {
  ::unlink(path_.c_str());
  held_ = false;
}

}  // namespace xconn
