#include "core/base/secret_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xconn {

boost::system::result<std::string, std::string> read_or_create_secret_file(const std::filesystem::path& file,
                                                                           const std::function<std::string()>& make,
                                                                           std::size_t min_size) {
  using result = boost::system::result<std::string, std::string>;
  auto failed = [](std::string why) { return result(boost::system::in_place_error, std::move(why)); };
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return failed("cannot create " + file.parent_path().string() + ": " + ec.message());
  // O_EXCL: two servers starting at once never overwrite each other's secret.
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    std::string secret = make();
    bool ok = ::write(fd, secret.data(), secret.size()) == static_cast<ssize_t>(secret.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) return failed("cannot write " + file.string());
    return result(boost::system::in_place_value, secret);
  }
  if (errno != EEXIST) return failed("cannot create " + file.string() + ": " + std::strerror(errno));
  // The file itself, never where a link points (whoever could plant the link would choose what it reads and what
  // gets its mode changed): the mode is checked and tightened on the open file.
  fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ELOOP) return failed(file.string() + " is a symbolic link; a key file must be a plain file");
  if (fd < 0) return failed("cannot read " + file.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return failed(file.string() + " is not a plain file");
  }
  // A second name reaches the same inode: whoever made it could read the key there, and tightening the mode would
  // change that other file too.
  if (st.st_nlink > 1) {
    ::close(fd);
    return failed(file.string() + " has other hard links; a key file must have only its own name");
  }
  if ((st.st_mode & 077) != 0) ::fchmod(fd, 0600);
  constexpr std::size_t max_size = 64 * 1024;  // a key is far smaller; nothing else is read whole
  std::string secret(max_size + 1, '\0');
  std::size_t size = 0;
  for (ssize_t n; size < secret.size() && (n = ::read(fd, secret.data() + size, secret.size() - size)) > 0;)
    size += static_cast<std::size_t>(n);
  ::close(fd);
  if (size > max_size) return failed(file.string() + " is larger than a key file can be");
  secret.resize(size);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r' || secret.back() == ' ')) secret.pop_back();
  if (secret.size() < min_size)
    return failed(file.string() + " holds no usable key (at least " + std::to_string(min_size) + " characters)");
  return result(boost::system::in_place_value, secret);
}

}  // namespace xconn
