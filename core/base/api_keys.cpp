#include "core/base/api_keys.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
#include "core/base/log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace xconn {
namespace {

using key_result = boost::system::result<std::string, std::string>;
key_result failed(std::string why) { return key_result(boost::system::in_place_error, std::move(why)); }

key_result read_or_create_key(const std::filesystem::path& file) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return failed("cannot create " + file.parent_path().string() + ": " + ec.message());
  // O_EXCL: two servers starting at once never overwrite each other's key.
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    std::string key = "xck_" + random_id("", 40);
    bool ok = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) return failed("cannot write " + file.string());
    return key_result(boost::system::in_place_value, key);
  }
  if (errno != EEXIST) return failed("cannot create " + file.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) ::chmod(file.c_str(), 0600);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string key = text.str();
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.size() < 16) return failed(file.string() + " holds no usable key (at least 16 characters)");
  return key_result(boost::system::in_place_value, key);
}

}  // namespace

boost::system::result<api_keys, std::string> api_keys::load(const std::vector<std::string>& configured,
                                                            const std::string& store_path) {
  api_keys out;
  if (!configured.empty()) {
    out.keys_ = configured;
  } else {
    auto file = std::filesystem::path(store_path) / "api_key";
    auto key = read_or_create_key(file);
    if (!key) return key.error();
    out.keys_.push_back(*key);
    out.key_file_ = file.string();
  }
  for (const auto& k : out.keys_) log::add_secret(k);
  return out;
}

bool api_keys::authorizes(std::string_view header) const {
  constexpr std::string_view scheme = "Bearer ";
  if (header.size() <= scheme.size() || !std::equal(scheme.begin(), scheme.end(), header.begin(),
                                                    [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
    return false;
  header.remove_prefix(scheme.size());
  bool match = false;
  for (const auto& k : keys_) match |= constant_time_equal(header, k);  // no early exit
  return match;
}

}  // namespace xconn
