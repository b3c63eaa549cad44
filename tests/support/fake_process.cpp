#include "support/fake_process.hpp"

#include "support/files_helpers.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <vector>

namespace xconn::test {

std::unique_ptr<daemon_process> start_fake_script(const std::string& script, const temp_dir& dir, bool tls) {
  std::vector<std::string> args{(source_dir() / "tests/fakes" / script).string()};
  if (tls) {
    auto cert = dir.path() / "cert.pem", key = dir.path() / "key.pem";
    auto command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
                   "-keyout " + key.string() + " -out " + cert.string() + " >/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) ADD_FAILURE() << "openssl could not make a certificate";
    args.push_back(cert.string());
    args.push_back(key.string());
  }
  return std::make_unique<daemon_process>(args, dir.path(), std::map<std::string, std::string>{}, XCONN_TEST_PYTHON);
}

}  // namespace xconn::test
