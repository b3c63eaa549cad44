#include "support/ngircd_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

namespace xconn::test {

bool loopback_accepts(unsigned short port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

ngircd_server::ngircd_server(const std::string& password, bool tls) : port_(free_loopback_port()) {
  // Nick length raised from ngircd's 9 so tests may name their nicks; no DNS, ident or PAM (nothing outside).
  std::string conf = "[Global]\nName = irc.xconn.test\nInfo = xconn test server\nListen = 127.0.0.1\nPorts = " +
                     std::to_string(port_) + "\nMotdPhrase = xconn tests\n" +
                     (password.empty() ? "" : "Password = " + password + "\n") +
                     "[Limits]\nMaxConnectionsIP = 0\nMaxNickLength = 30\nPingTimeout = 120\nPongTimeout = 20\n"
                     "[Options]\nPAM = no\nIdent = no\nDNS = no\nConnectIPv6 = no\n";
  if (tls) {
    tls_port_ = free_loopback_port();
    auto cert = dir_.path() / "cert.pem", key = dir_.path() / "key.pem";
    auto command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
                   "subjectAltName=IP:127.0.0.1 -keyout " + key.string() + " -out " + cert.string() + " >/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) ADD_FAILURE() << "openssl could not make a certificate";
    conf += "[SSL]\nCertFile = " + cert.string() + "\nKeyFile = " + key.string() + "\nPorts = " +
            std::to_string(tls_port_) + "\n";
  }
  write_file(dir_.path() / "ngircd.conf", conf);
  start();
}

void ngircd_server::start() {
  process_ = std::make_unique<daemon_process>(
      std::vector<std::string>{"-n", "-f", (dir_.path() / "ngircd.conf").string()}, dir_.path(),
      std::map<std::string, std::string>{}, "/usr/sbin/ngircd");
  // With TLS, ngircd first makes its Diffie-Hellman parameters (a few seconds).
  ASSERT_TRUE(wait_until([&] { return loopback_accepts(port_) && (!tls_port_ || loopback_accepts(tls_port_)); },
                         std::chrono::seconds(30)))
      << console();
}

void ngircd_server::set_password(const std::string& password) {
  auto conf = read_file(dir_.path() / "ngircd.conf");
  auto at = conf.find("Password = ");
  if (at != std::string::npos) conf.erase(at, conf.find('\n', at) + 1 - at);
  if (!password.empty()) conf.insert(conf.find("[Limits]"), "Password = " + password + "\n");
  write_file(dir_.path() / "ngircd.conf", conf);
}

void ngircd_server::kill() {
  if (!process_) return;
  process_->signal(SIGKILL);
  process_->wait_exit();
  ASSERT_TRUE(wait_until([&] { return !loopback_accepts(port_); }, std::chrono::seconds(10)));
}

}  // namespace xconn::test
