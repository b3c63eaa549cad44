#include "core/base/secret_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) ::chmod(file.c_str(), 0600);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r' || secret.back() == ' ')) secret.pop_back();
  if (secret.size() < min_size)
    return failed(file.string() + " holds no usable key (at least " + std::to_string(min_size) + " characters)");
  return result(boost::system::in_place_value, secret);
}

}  // namespace xconn
