#include "core/base/api_keys.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
#include "core/base/log.hpp"
#include "core/base/secret_file.hpp"

#include <filesystem>

namespace xconn {

boost::system::result<api_keys, std::string> api_keys::load(const std::vector<std::string>& configured,
                                                            const std::string& store_path) {
  api_keys out;
  if (!configured.empty()) {
    out.keys_ = configured;
  } else {
    auto file = std::filesystem::path(store_path) / "api_key";
    auto key = read_or_create_secret_file(file, [] { return "xck_" + random_id("", 40); }, 16);
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
