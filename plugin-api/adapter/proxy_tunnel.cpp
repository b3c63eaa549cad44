#include "proxy_tunnel.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace xconn::adapter::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;

namespace {

[[noreturn]] void refuse() { throw boost::system::system_error(asio::error::connection_refused); }

// RFC 9110 §9.3.6, with Basic credentials (RFC 7617) when the proxy URL has them.
asio::awaitable<void> http_connect(beast::tcp_stream& proxy, const proxy_url& via, const endpoint& to) {
  auto authority = (to.host.find(':') != std::string::npos ? "[" + to.host + "]" : to.host) + ":" + to.port;
  http::request<http::empty_body> connect{http::verb::connect, authority, 11};
  connect.set(http::field::host, authority);
  if (!via.user.empty()) {
    auto plain = via.user + ":" + via.password;
    std::string encoded(beast::detail::base64::encoded_size(plain.size()), '\0');
    encoded.resize(beast::detail::base64::encode(encoded.data(), plain.data(), plain.size()));
    connect.set(http::field::proxy_authorization, "Basic " + encoded);
  }
  co_await http::async_write(proxy, connect, use_awaitable);
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> answer;
  answer.skip(true);  // a CONNECT answer has no body
  co_await http::async_read_header(proxy, buffer, answer, use_awaitable);
  if (answer.get().result() != http::status::ok || buffer.size() != 0) refuse();
}

// RFC 1928 CONNECT by host name (the proxy resolves it: where a target is blocked, so may its DNS be), with RFC 1929
// user/password when the proxy URL has them.
asio::awaitable<void> socks5_connect(beast::tcp_stream& proxy, const proxy_url& via, const endpoint& to) {
  bool with_password = !via.user.empty();
  std::string greeting = with_password ? std::string("\x05\x01\x02", 3) : std::string("\x05\x01\x00", 3);
  co_await asio::async_write(proxy, asio::buffer(greeting), use_awaitable);
  std::array<std::uint8_t, 2> chosen{};
  co_await asio::async_read(proxy, asio::buffer(chosen), use_awaitable);
  if (chosen[0] != 5 || chosen[1] != (with_password ? 2 : 0)) refuse();
  if (with_password) {
    std::string login(1, '\x01');
    login += static_cast<char>(via.user.size());
    login += via.user;
    login += static_cast<char>(via.password.size());
    login += via.password;
    co_await asio::async_write(proxy, asio::buffer(login), use_awaitable);
    std::array<std::uint8_t, 2> status{};
    co_await asio::async_read(proxy, asio::buffer(status), use_awaitable);
    if (status[0] != 1 || status[1] != 0) refuse();
  }
  if (to.host.size() > 255) refuse();
  auto port = static_cast<std::uint16_t>(std::stoi(to.port));
  std::string request("\x05\x01\x00\x03", 4);
  request += static_cast<char>(to.host.size());
  request += to.host;
  request += static_cast<char>(port >> 8);
  request += static_cast<char>(port & 0xff);
  co_await asio::async_write(proxy, asio::buffer(request), use_awaitable);
  // The answer: VER REP RSV ATYP, then the bound address (4 or 16 bytes, or a length and a name) and a port.
  std::array<std::uint8_t, 5> head{};
  co_await asio::async_read(proxy, asio::buffer(head), use_awaitable);
  if (head[0] != 5 || head[1] != 0) refuse();
  std::size_t rest = head[3] == 1 ? 4 - 1 + 2 : head[3] == 4 ? 16 - 1 + 2 : head[3] == 3 ? head[4] + 2u : 0;
  if (rest == 0) refuse();
  std::array<std::uint8_t, 258> bound{};
  co_await asio::async_read(proxy, asio::buffer(bound.data(), rest), use_awaitable);
}

}  // namespace

asio::awaitable<void> open_tunnel(beast::tcp_stream& proxy, const proxy_url& via, const endpoint& to) {
  if (via.type == proxy_url::kind::socks5)
    co_await socks5_connect(proxy, via, to);
  else
    co_await http_connect(proxy, via, to);
}

}  // namespace xconn::adapter::detail
