#include "core/files/download_links.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"

#include <charconv>

namespace xconn {

namespace {
constexpr std::string_view secret_key = "download_url_secret";
}

boost::system::result<download_links, std::string> download_links::load(store& db) {
  if (auto secret = db.get("meta", secret_key); secret && secret->size() == 64) return download_links(*secret);
  std::string secret = random_hex(32);
  if (auto ec = db.write_sync(write_batch{}.put("meta", std::string(secret_key), secret)))
    return "cannot keep the download URL secret: " + ec.message();
  return download_links(std::move(secret));
}

std::string download_links::sign(std::string_view plugin_id, std::string_view file_ref, std::string_view exp) const {
  std::string material;
  material.append(plugin_id).append("\n").append(file_ref).append("\n").append(exp);
  return hmac_sha256_hex(secret_, material);
}

std::string download_links::url(std::string_view base_url, std::string_view plugin_id, std::string_view file_ref,
                                long long expires_at_s) const {
  std::string exp = std::to_string(expires_at_s);
  std::string out;
  out.append(base_url).append("/connectors/").append(plugin_id).append("/files/refs/").append(file_ref);
  out.append("?exp=").append(exp).append("&sig=").append(sign(plugin_id, file_ref, exp));
  return out;
}

bool download_links::verify(std::string_view plugin_id, std::string_view file_ref, std::string_view exp,
                            std::string_view sig, long long now_s) const {
  long long at = 0;
  auto [end, ec] = std::from_chars(exp.data(), exp.data() + exp.size(), at);
  if (ec != std::errc{} || end != exp.data() + exp.size() || exp.size() > 12) return false;
  bool genuine = constant_time_equal(sign(plugin_id, file_ref, exp), sig);
  return genuine && at >= now_s;
}

}  // namespace xconn
