#include "core/plugin_host/plugin_library.hpp"

#include "core/base/crypto.hpp"
#include "core/plugin_host/elf_check.hpp"
#include "core/plugin_host/start_crash_records.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace xconn {

std::optional<std::string> file_sha256(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  sha256_stream digest;
  std::array<char, 64 * 1024> buffer;
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0)
    digest.update({buffer.data(), static_cast<std::size_t>(in.gcount())});
  if (in.bad()) return std::nullopt;
  return digest.final_hex();
}

namespace {

// One read into a buffer of the file's size: a plugin built with sanitizers runs to ~100 MB, and a character at a
// time through a stream iterator took seconds of every start there.
std::optional<std::string> read_whole_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  auto size = in.tellg();
  if (size < 0) return std::nullopt;
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size) || in.gcount() != size) return std::nullopt;
  return bytes;
}

// Written and synced before the rename that names it, so the cache never holds a name over missing bytes.
bool write_file_durably(const std::filesystem::path& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  bool ok = done == bytes.size() && ::fsync(fd) == 0;
  return ::close(fd) == 0 && ok;
}

const char* missing_required_hook(const xconn_plugin_api& t) {
  if (!t.xconn_plugin_on_validate_config) return "on_validate_config";
  if (!t.xconn_plugin_on_create) return "on_create";
  if (!t.xconn_plugin_on_destroy) return "on_destroy";
  if (!t.xconn_plugin_on_start) return "on_start";
  if (!t.xconn_plugin_on_stop) return "on_stop";
  if (!t.xconn_plugin_on_invoke_tool) return "on_invoke_tool";
  return nullptr;
}

// An Optional hook may be NULL unless the manifest declares the feature it serves.
const char* missing_feature_hook(const xconn_plugin_api& t, const plugin_manifest& m) {
  auto flows = m.card.if_contains("auth_flows");
  bool has_flows = flows && flows->is_array() && !flows->as_array().empty();
  if (has_flows && (!t.xconn_plugin_on_auth_start || !t.xconn_plugin_on_auth_status || !t.xconn_plugin_on_auth_cancel ||
                    !t.xconn_plugin_on_auth_logout))
    return "the card declares auth_flows but the plugin table lacks an auth hook";
  if (!m.http_routes.empty() && !t.xconn_plugin_on_http && !t.xconn_plugin_on_http_request)
    return "the manifest declares http_routes but the plugin table has no on_http";
  if (m.delivery.can_edit && !t.xconn_plugin_on_update)
    return "the manifest declares delivery.can_edit but the plugin table has no on_update";
  if (m.delivery.typing && !t.xconn_plugin_on_activity)
    return "the manifest declares delivery.typing but the plugin table has no on_activity";
  return nullptr;
}

}  // namespace

boost::system::result<std::shared_ptr<plugin_library>, std::string> load_plugin_library(
    const std::filesystem::path& file, const std::filesystem::path& cache_dir) {
  auto bytes = read_whole_file(file);
  if (!bytes) return std::string("cannot read the file");
  auto out = std::make_shared<plugin_library>();
  out->file = file;
  out->sha256 = sha256_hex(*bytes);
  if (auto crashed = crashed_start_refusal(cache_dir, out->sha256); !crashed.empty()) return crashed;
  // dlopen maps and touches segments past the end of a cut-short file: SIGBUS, not an error. Checked first.
  if (auto bad = elf_layout_error(*bytes); !bad.empty()) return "not a loadable shared library: " + bad;

  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  auto cached = cache_dir / (out->sha256 + ".so");
  // The copy holds the very bytes hashed and checked (the file may change meanwhile). One of another size was cut
  // by a crash before it reached the disk: written again.
  auto cached_size = std::filesystem::file_size(cached, ec);
  if (ec || cached_size != bytes->size()) {
    auto partial = cache_dir / (out->sha256 + ".so.part");
    if (!write_file_durably(partial, *bytes)) return "cannot write into " + cache_dir.string();
    std::filesystem::rename(partial, cached, ec);
    if (ec) return "cannot copy into " + cache_dir.string() + ": " + ec.message();
  }

  boost::dll::fs::error_code load_ec;
  out->library.load(cached, boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now, load_ec);
  if (load_ec) return std::string("not a loadable shared library");
  if (!out->library.has(XCONN_PLUGIN_ENTRY_SYMBOL))
    return std::string("not an xconn plugin (no ") + XCONN_PLUGIN_ENTRY_SYMBOL + " symbol)";
  auto entry = out->library.get<const xconn_plugin_api*(uint32_t)>(XCONN_PLUGIN_ENTRY_SYMBOL);
  const xconn_plugin_api* api = entry(XCONN_PLUGIN_API_MAJOR);
  if (!api) return "the plugin cannot serve plugin API major " + std::to_string(XCONN_PLUGIN_API_MAJOR);
  if (api->api_major != XCONN_PLUGIN_API_MAJOR)
    return "built against plugin API major " + std::to_string(api->api_major) + ", this host speaks major " +
           std::to_string(XCONN_PLUGIN_API_MAJOR);
  if (api->struct_size < XCONN_PLUGIN_API_1_0_SIZE)
    return "plugin table too small (" + std::to_string(api->struct_size) + " bytes)";
  std::memcpy(&out->table, api, std::min<std::size_t>(api->struct_size, sizeof out->table));
  out->table.struct_size = sizeof out->table;
  out->api = &out->table;
  if (auto missing = missing_required_hook(out->table)) return std::string("plugin table has no ") + missing;

  auto manifest = parse_manifest(std::string_view(api->manifest_json.data, api->manifest_json.size),
                                 std::string_view(api->build_json.data, api->build_json.size));
  if (!manifest) return "invalid manifest: " + manifest.error();
  if (manifest->id != file.stem().string())
    return "manifest id " + manifest->id + " does not match the file name " + file.filename().string();
  if (auto missing = missing_feature_hook(out->table, *manifest)) return std::string(missing);
  out->manifest = std::move(*manifest);
  return out;
}

}  // namespace xconn
