#include "support/ngircd_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include <csignal>

namespace xconn::test {

bool loopback_accepts(unsigned short port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

ngircd_server::ngircd_server(const std::string& password) : port_(free_loopback_port()) {
  // Nick length raised from ngircd's 9 so tests may name their nicks; no DNS, ident or PAM (nothing outside).
  write_file(dir_.path() / "ngircd.conf",
             "[Global]\nName = irc.xconn.test\nInfo = xconn test server\nListen = 127.0.0.1\nPorts = " +
                 std::to_string(port_) + "\nMotdPhrase = xconn tests\n" +
                 (password.empty() ? "" : "Password = " + password + "\n") +
                 "[Limits]\nMaxConnectionsIP = 0\nMaxNickLength = 30\nPingTimeout = 120\nPongTimeout = 20\n"
                 "[Options]\nPAM = no\nIdent = no\nDNS = no\nConnectIPv6 = no\n");
  start();
}

void ngircd_server::start() {
  process_ = std::make_unique<daemon_process>(
      std::vector<std::string>{"-n", "-f", (dir_.path() / "ngircd.conf").string()}, dir_.path(),
      std::map<std::string, std::string>{}, "/usr/sbin/ngircd");
  ASSERT_TRUE(wait_until([&] { return loopback_accepts(port_); }, std::chrono::seconds(10))) << console();
}

void ngircd_server::kill() {
  if (!process_) return;
  process_->signal(SIGKILL);
  process_->wait_exit();
  ASSERT_TRUE(wait_until([&] { return !loopback_accepts(port_); }, std::chrono::seconds(10)));
}

}  // namespace xconn::test
