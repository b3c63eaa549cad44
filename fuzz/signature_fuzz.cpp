// The signed download URL check (download_links::verify in core/files/download_links.cpp), fed a request target
// the way the transfer plane reads it (file_routes.cpp: split_connector_path, the file_ref after /files/refs/,
// query_param exp and sig). The secret is fixed, so the seeds hold genuine URLs for the fuzzer to mutate. Checked:
// an accepted URL is unexpired, and it stops verifying once expired or with its signature, plugin or ref touched;
// and for a valid plugin id and file_ref, the URL url() builds reads back through the same path and verifies.
#include "core/files/download_links.hpp"
#include "core/files/file_store.hpp"
#include "core/plugin_host/plugin_manifest.hpp"
#include "core/wire/http_types.hpp"
#include "fuzz/fuzz_check.hpp"

#include <unistd.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace {

using namespace xconn;

constexpr long long now_s = 1'700'000'000LL;
constexpr std::string_view base_url = "https://files.example:8443";
// The seeds (fuzz/corpus/signature) are signed with this key.
constexpr std::string_view fixed_secret = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

const download_links& links() {
  static const download_links l = [] {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("xconn-signature-fuzz-" + std::to_string(::getpid()));
    auto db = store::open({dir.string(), 1ull << 24, {"meta"}});
    FUZZ_CHECK(db.has_value());
    FUZZ_CHECK(!(*db)->write_sync(write_batch{}.put("meta", "download_url_secret", std::string(fixed_secret))));
    auto loaded = download_links::load(**db);
    FUZZ_CHECK(loaded.has_value());
    db->reset();
    fs::remove_all(dir);
    return *loaded;
  }();
  return l;
}

struct signed_target {
  std::string_view plugin, ref, exp, sig;
  bool is_file_ref = false;
};

// What serve_file_ref reads from a target.
signed_target read_target(std::string_view target) {
  constexpr std::string_view refs_prefix = "/files/refs/";
  auto parts = split_connector_path(target);
  signed_target t;
  t.plugin = parts.plugin_id;
  t.is_file_ref = parts.rest.substr(0, refs_prefix.size()) == refs_prefix;
  if (t.is_file_ref) t.ref = parts.rest.substr(refs_prefix.size());
  t.exp = query_param(target, "exp");
  t.sig = query_param(target, "sig");
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& l = links();
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  const signed_target t = read_target(target);
  if (!t.is_file_ref) return 0;

  if (l.verify(t.plugin, t.ref, t.exp, t.sig, now_s)) {
    long long at = 0;
    auto [end, ec] = std::from_chars(t.exp.data(), t.exp.data() + t.exp.size(), at);
    FUZZ_CHECK(ec == std::errc{} && end == t.exp.data() + t.exp.size() && at >= now_s);
    FUZZ_CHECK(!l.verify(t.plugin, t.ref, t.exp, t.sig, at + 1));  // expired a second later
    std::string touched(t.sig);
    touched.back() = touched.back() == '0' ? '1' : '0';
    FUZZ_CHECK(!l.verify(t.plugin, t.ref, t.exp, touched, now_s));
    FUZZ_CHECK(!l.verify(std::string(t.plugin) + "x", t.ref, t.exp, t.sig, now_s));
    FUZZ_CHECK(!l.verify(t.plugin, std::string(t.ref) + "x", t.exp, t.sig, now_s));
  }

  // A URL the server hands out for this plugin and ref verifies when read back the same way.
  if (valid_plugin_id(t.plugin) && valid_file_ref(t.ref)) {
    const std::string url = l.url(base_url, t.plugin, t.ref, now_s + 3600);
    FUZZ_CHECK(url.starts_with(base_url));
    const std::string_view path = std::string_view(url).substr(base_url.size());
    const signed_target back = read_target(path);
    FUZZ_CHECK(back.is_file_ref && back.plugin == t.plugin && back.ref == t.ref);
    FUZZ_CHECK(l.verify(back.plugin, back.ref, back.exp, back.sig, now_s));
  }
  return 0;
}
