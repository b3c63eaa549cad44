// Signed download URLs (docs/protocol.md "Files"): xAgent fetches a file item's download_url without any header, so the
// URL itself carries the permission: HMAC-SHA256 over plugin, file_ref and expiry with a server secret that is
// kept in the store (so links survive a restart) and never leaves the process.
#pragma once

#include "core/store/store.hpp"

#include <boost/system/result.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace xconn {

class download_links {
 public:
  // Reads the secret from the store's meta database, creating it on first start.
  static boost::system::result<download_links, std::string> load(store& db);

  // {base_url}/connectors/{plugin}/files/refs/{ref}?exp={expires_at_s}&sig={hex}
  std::string url(std::string_view base_url, std::string_view plugin_id, std::string_view file_ref,
                  long long expires_at_s) const;
  // True when sig is this server's signature of (plugin, ref, exp) and exp (unix seconds) is not past now_s.
  bool verify(std::string_view plugin_id, std::string_view file_ref, std::string_view exp, std::string_view sig,
              long long now_s) const;

 private:
  explicit download_links(std::string secret) : secret_(std::move(secret)) {}
  std::string sign(std::string_view plugin_id, std::string_view file_ref, std::string_view exp) const;
  std::string secret_;
};

}  // namespace xconn
