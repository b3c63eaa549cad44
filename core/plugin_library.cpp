#include "core/plugin_library.hpp"

#include "core/crypto.hpp"

#include <array>
#include <fstream>
#include <sstream>

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

boost::system::result<std::shared_ptr<plugin_library>, std::string> load_plugin_library(
    const std::filesystem::path& file, const std::filesystem::path& cache_dir) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::string("cannot read the file");
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto out = std::make_shared<plugin_library>();
  out->file = file;
  out->sha256 = sha256_hex(bytes.str());

  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  auto cached = cache_dir / (out->sha256 + ".so");
  if (!std::filesystem::exists(cached, ec)) {
    auto partial = cache_dir / (out->sha256 + ".so.part");
    std::filesystem::copy_file(file, partial, std::filesystem::copy_options::overwrite_existing, ec);
    if (!ec) std::filesystem::rename(partial, cached, ec);
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
  if (api->struct_size < sizeof(xconn_plugin_api))
    return "plugin table too small (" + std::to_string(api->struct_size) + " bytes)";
  if (!api->xconn_plugin_on_validate_config || !api->xconn_plugin_on_create || !api->xconn_plugin_on_destroy ||
      !api->xconn_plugin_on_start || !api->xconn_plugin_on_stop || !api->xconn_plugin_on_invoke_tool ||
      !api->xconn_plugin_on_auth_start || !api->xconn_plugin_on_auth_status || !api->xconn_plugin_on_auth_cancel ||
      !api->xconn_plugin_on_auth_logout)
    return std::string("plugin table has a missing function");
  out->api = api;

  auto manifest = parse_manifest(std::string_view(api->manifest_json.data, api->manifest_json.size),
                                 std::string_view(api->build_json.data, api->build_json.size));
  if (!manifest) return "invalid manifest: " + manifest.error();
  if (manifest->id != file.stem().string())
    return "manifest id " + manifest->id + " does not match the file name " + file.filename().string();
  out->manifest = std::move(*manifest);
  return out;
}

}  // namespace xconn
