// Debian's ngircd as a real IRC server for the irc plugin's tests: a generated config in a temp folder, a loopback
// port, no daemon mode (-n), killed with the object. kill() and start() again take it down and up on the same port.
#pragma once

#include "support/daemon_process.hpp"
#include "support/test_support.hpp"

#include <memory>
#include <string>

namespace xconn::test {

class ngircd_server {
 public:
  // password: the server password every client must give ("" for none). tls: a TLS port too, with a self-signed
  // certificate for 127.0.0.1 made here (ca_file() names it).
  explicit ngircd_server(const std::string& password = "", bool tls = false);
  unsigned short port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string tls_address() const { return "127.0.0.1:" + std::to_string(tls_port_); }
  std::string ca_file() const { return (dir_.path() / "cert.pem").string(); }
  void start();  // returns once the port accepts (ASSERTs it)
  void kill();   // SIGKILL, and waits for the exit
  // The server password from the next start() on ("" for none): a server that now refuses the one a channel kept.
  void set_password(const std::string& password);
  std::string console() const { return process_ ? process_->console() : std::string(); }

 private:
  temp_dir dir_;
  unsigned short port_;
  unsigned short tls_port_ = 0;
  std::unique_ptr<daemon_process> process_;
};

// Whether something accepts TCP connections on 127.0.0.1:port right now.
bool loopback_accepts(unsigned short port);

}  // namespace xconn::test
