#include "core/plugin_host/start_crash_records.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace xconn {

namespace {

constexpr std::string_view marker_prefix = "starting-";
constexpr std::string_view record_prefix = "crashed-";

bool is_sha256_hex(std::string_view s) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  return s.size() == 64 && std::all_of(s.begin(), s.end(), hex);
}

// A rename or unlink is durable only once its folder is synced.
void sync_dir(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool write_whole(const std::filesystem::path& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0 && done == text.size();
}

// The record as the operator must delete it: absolute, whatever the cwd of the command that reads the line.
std::string shown(const std::filesystem::path& record) {
  std::error_code ec;
  auto absolute = std::filesystem::absolute(record, ec);
  return (ec ? record : absolute).lexically_normal().string();
}

// The marker's text: the plugin id on the first line, its file on the second. Read for one log line only: at most
// 4 KiB, anything but printable ASCII shown as '?' (the cache folder is the store's, but a log line stays one line).
std::pair<std::string, std::string> read_marker(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  auto newline = text.find('\n');
  std::string id = text.substr(0, newline);
  std::string file = newline == std::string::npos ? "" : text.substr(newline + 1);
  file = file.substr(0, file.find('\n'));
  for (auto* part : {&id, &file})
    for (char& c : *part)
      if (c < 0x20 || c > 0x7e) c = '?';
  return {id.empty() ? "?" : id, file.empty() ? "?" : file};
}

}  // namespace

void collect_start_markers(const std::filesystem::path& cache_dir) {
  std::error_code ec;
  bool renamed = false;
  for (auto it = std::filesystem::directory_iterator(cache_dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    auto name = it->path().filename().string();
    if (!name.starts_with(marker_prefix)) continue;
    auto sha = name.substr(marker_prefix.size());
    if (!is_sha256_hex(sha)) continue;
    auto [id, file] = read_marker(it->path());
    auto record = cache_dir / (std::string(record_prefix) + sha);
    std::error_code rename_ec;
    std::filesystem::rename(it->path(), record, rename_ec);
    if (rename_ec) {
      spdlog::error("plugin-cache {}: cannot record the crash: {}", name, rename_ec.message());
      continue;
    }
    renamed = true;
    spdlog::error(
        "plugin {} (file {}, sha256 {}) crashed the daemon during its start last time: that build is refused from now "
        "on; deploy a new build (a new sha256) or delete {} to try it again",
        id, file, sha, shown(record));
  }
  if (renamed) sync_dir(cache_dir);
}

std::string crashed_start_refusal(const std::filesystem::path& cache_dir, const std::string& sha256) {
  auto record = cache_dir / (std::string(record_prefix) + sha256);
  std::error_code ec;
  if (!std::filesystem::exists(record, ec)) return "";
  return "this build (sha256 " + sha256 +
         ") crashed the daemon during its start last time; deploy a new build or delete " + shown(record) +
         " to try it again";
}

start_marker::start_marker(const std::filesystem::path& cache_dir, const std::string& sha256,
                           const std::string& plugin_id, const std::filesystem::path& file) {
  auto path = cache_dir / (std::string(marker_prefix) + sha256);
  if (write_whole(path, plugin_id + "\n" + file.string() + "\n")) {
    path_ = std::move(path);
    return;
  }
  // The start goes ahead: a full disk must not stop plugins; only a crash in this start goes unremembered.
  spdlog::warn("plugin {}: cannot write {} ({}); a crash in this start would not be remembered", plugin_id,
               path.string(), std::strerror(errno));
}

void start_marker::returned() {
  if (path_.empty() || removed_) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  removed_ = true;
}

start_marker::~start_marker() {
  returned();
  if (!path_.empty()) sync_dir(path_.parent_path());
}

}  // namespace xconn
