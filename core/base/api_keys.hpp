// The system API keys xAgent presents as `Authorization: Bearer <key>` (spec §3, docs/protocol.md "Keys").
#pragma once

#include <boost/system/result.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace xconn {

class api_keys {
 public:
  // Uses the configured keys; when there are none, reads {store_path}/api_key, generating it (mode 0600)
  // on first start. generated_path is set when the key came from that file.
  static boost::system::result<api_keys, std::string> load(const std::vector<std::string>& configured,
                                                           const std::string& store_path);

  // Checks an Authorization header value in constant time per key.
  bool authorizes(std::string_view authorization_header) const;

  const std::string& key_file() const { return key_file_; }  // empty when keys are configured
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::vector<std::string> keys_;
  std::string key_file_;
};

}  // namespace xconn
