// A fake target (a script in tests/fakes/) as a child process on loopback: with tls, a self-signed certificate for
// 127.0.0.1 is made in dir first (dir/cert.pem is what a client trusts) and handed to the script. The script prints
// the ports it listens on to its console.
#pragma once

#include "support/daemon_process.hpp"

#include <memory>
#include <string>

namespace xconn::test {

std::unique_ptr<daemon_process> start_fake_script(const std::string& script, const temp_dir& dir, bool tls);

}  // namespace xconn::test
