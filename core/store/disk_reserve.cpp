#include "core/store/disk_reserve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace xconn {

bool disk_reserve::take() {
  error_.clear();
  if (held_ || bytes_ == 0) return held_ = true;
  // Non-blocking: a FIFO opened for writing waits for a reader forever (ENXIO instead); no symbolic link followed.
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0) {
    int e = errno;
    if (e == ENOSPC || e == EDQUOT) return false;
    error_ = path_ + (e == ENXIO || e == ELOOP || e == EISDIR ? " is not a regular file (remove it)"
                                                              : ": " + std::generic_category().message(e));
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error_ = path_ + " is not a regular file (remove it)";
    return false;
  }
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
