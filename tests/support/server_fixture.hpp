// The real server, in this process, on 127.0.0.1 port 0 with a fresh store and plugin folder.
#pragma once

#include "core/base/config.hpp"
#include "core/app/server.hpp"
#include "support/test_support.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace xconn::test {

inline const std::string test_api_key = "xck_test_key_0123456789abcdef";

class server_fixture {
 public:
  // plugins: file names to copy into the plugin folder, from build/plugins or build/test-plugins.
  explicit server_fixture(std::vector<std::string> plugins = {"echo.so"},
                          const std::function<void(config&)>& tweak = {});
  ~server_fixture();

  void start();  // ASSERTs success
  void stop();
  unsigned short port() const { return srv_->port(); }
  const std::string& key() const { return test_api_key; }
  config& cfg() { return cfg_; }
  const temp_dir& dir() const { return dir_; }
  xconn::server& srv() { return *srv_; }

 private:
  temp_dir dir_;
  config cfg_;
  std::unique_ptr<xconn::server> srv_;
};

// Validates a JSON document with the spec's schema (e.g. "xagent.connector.v1"); returns "" when valid,
// else the violations.
std::string schema_violations(const std::string& schema_name, const std::string& json_text);
// The same for many documents in one run of the checker (it starts slowly).
std::string schema_violations(const std::string& schema_name, const std::vector<std::string>& json_texts);

}  // namespace xconn::test
