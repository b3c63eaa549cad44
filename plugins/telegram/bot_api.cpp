#include "bot_api.hpp"

#include "kit/tls_client.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

#include <openssl/rand.h>

#include <array>
#include <cstdint>

namespace telegram {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using asio::use_awaitable;

namespace {

constexpr std::size_t max_answer_bytes = 8u << 20;  // a getUpdates page of 100 updates is far below this

std::string random_boundary() {
  unsigned char raw[12];
  RAND_bytes(raw, sizeof raw);
  std::string out = "xconn-tg-";
  for (unsigned char c : raw) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

// Telegram's answer body into reply (ok, result, error_code, description, retry_after).
void read_answer(const std::string& body, api_reply& reply) {
  json::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object()) {
    reply.description = "not a Bot API answer";
    return;
  }
  const auto& o = v.as_object();
  if (auto* ok = o.if_contains("ok"); ok && ok->is_bool()) reply.ok = ok->as_bool();
  if (auto* r = o.if_contains("result")) reply.result = *r;
  if (auto* c = o.if_contains("error_code"); c && c->is_int64()) reply.error_code = static_cast<int>(c->as_int64());
  if (auto* d = o.if_contains("description"); d && d->is_string()) reply.description = std::string(d->as_string()).substr(0, 200);
  if (auto* p = o.if_contains("parameters"); p && p->is_object())
    if (auto* ra = p->as_object().if_contains("retry_after"); ra && ra->is_int64())
      reply.retry_after_s = static_cast<int>(ra->as_int64());
}

template <class Stream>
asio::awaitable<void> send_and_read(Stream& stream, http::request<http::string_body>& req,
                                    http::response_parser<http::string_body>& parser) {
  co_await http::async_write(stream, req, use_awaitable);
  beast::flat_buffer buffer;
  co_await http::async_read(stream, buffer, parser, use_awaitable);
}

}  // namespace

struct bot_api::request {
  http::verb method = http::verb::post;
  std::string target;
  std::string content_type;
  std::string body;
};

bot_api::bot_api(asio::io_context& io, api_endpoint endpoint, const std::string& ca_file, std::string* error,
                 std::optional<proxy_url> proxy)
    : io_(io), endpoint_(std::move(endpoint)), proxy_(std::move(proxy)) {
  auto refused = xconn::kit::trust_for_clients(tls_, ca_file);
  if (error) *error = refused;
}

asio::awaitable<api_reply> bot_api::call(const std::string& token, const std::string& method,
                                         const json::object& params, std::chrono::seconds timeout) {
  request req;
  req.target = endpoint_.base_path + "/bot" + token + "/" + method;
  req.content_type = "application/json";
  req.body = json::serialize(params);
  co_return co_await exchange(std::move(req), timeout, nullptr, max_answer_bytes);
}

asio::awaitable<api_reply> bot_api::upload(const std::string& token, const std::string& method,
                                           const json::object& fields, const file_part& file,
                                           std::chrono::seconds timeout) {
  auto boundary = random_boundary();
  std::string body;
  body.reserve(file.bytes.size() + 1024);
  for (const auto& f : fields) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + std::string(f.key()) + "\"\r\n\r\n";
    body += f.value().is_string() ? std::string(f.value().as_string()) : json::serialize(f.value());
    body += "\r\n";
  }
  std::string filename;
  for (char c : file.filename) filename += (c == '"' || c == '\r' || c == '\n' || c == '\\') ? '_' : c;
  body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + file.field + "\"; filename=\"" + filename +
          "\"\r\nContent-Type: " + file.mime_type + "\r\n\r\n";
  body += file.bytes;
  body += "\r\n--" + boundary + "--\r\n";
  request req;
  req.target = endpoint_.base_path + "/bot" + token + "/" + method;
  req.content_type = "multipart/form-data; boundary=" + boundary;
  req.body = std::move(body);
  co_return co_await exchange(std::move(req), timeout, nullptr, max_answer_bytes);
}

asio::awaitable<api_reply> bot_api::download(const std::string& token, const std::string& file_path,
                                             std::size_t max_bytes, std::chrono::seconds timeout, std::string* body) {
  request req;
  req.method = http::verb::get;
  req.target = endpoint_.base_path + "/file/bot" + token + "/" + file_path;
  co_return co_await exchange(std::move(req), timeout, body, max_bytes);
}

asio::awaitable<bot_api::connection> bot_api::open(std::chrono::seconds timeout, std::string& step) {
  connection c;
  c.plain = std::make_unique<beast::tcp_stream>(io_);
  c.plain->expires_after(timeout);
  asio::ip::tcp::resolver resolver(io_);
  const auto& first_host = proxy_ ? proxy_->host : endpoint_.host;
  const auto& first_port = proxy_ ? proxy_->port : endpoint_.port;
  step = "resolve_failed";
  auto found = co_await resolver.async_resolve(first_host, first_port, use_awaitable);
  step = "connect_failed";
  co_await c.plain->async_connect(found, use_awaitable);
  if (proxy_) {
    // The proxy sees only the Bot API's host and port, never a token: TLS (or the fake's plain HTTP) runs inside.
    step = "proxy_failed";
    if (proxy_->type == proxy_url::kind::socks5)
      co_await socks5_tunnel(*c.plain);
    else
      co_await http_tunnel(*c.plain);
  }
  if (endpoint_.tls) {
    step = "tls_failed";
    c.tls = co_await xconn::kit::start_tls(*c.plain, tls_, endpoint_.host);
    c.plain.reset();
  }
  co_return c;
}

// RFC 9110 §9.3.6, with Basic credentials (RFC 7617) when the proxy URL has them.
asio::awaitable<void> bot_api::http_tunnel(beast::tcp_stream& proxy) {
  auto authority = (endpoint_.host.find(':') != std::string::npos ? "[" + endpoint_.host + "]" : endpoint_.host) +
                   ":" + endpoint_.port;
  http::request<http::empty_body> connect{http::verb::connect, authority, 11};
  connect.set(http::field::host, authority);
  if (!proxy_->user.empty()) {
    auto plain = proxy_->user + ":" + proxy_->password;
    std::string encoded(beast::detail::base64::encoded_size(plain.size()), '\0');
    encoded.resize(beast::detail::base64::encode(encoded.data(), plain.data(), plain.size()));
    connect.set(http::field::proxy_authorization, "Basic " + encoded);
  }
  co_await http::async_write(proxy, connect, use_awaitable);
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> answer;
  answer.skip(true);  // a CONNECT answer has no body
  co_await http::async_read_header(proxy, buffer, answer, use_awaitable);
  if (answer.get().result() != http::status::ok || buffer.size() != 0)
    throw boost::system::system_error(asio::error::connection_refused);
}

// RFC 1928 CONNECT by host name (the proxy resolves it: where Telegram is blocked, so may its DNS be), with RFC 1929
// user/password when the proxy URL has them. Any refusal is one error: the caller reports "proxy_refused".
asio::awaitable<void> bot_api::socks5_tunnel(beast::tcp_stream& proxy) {
  auto refuse = [] { throw boost::system::system_error(asio::error::connection_refused); };
  bool with_password = !proxy_->user.empty();
  std::string greeting = with_password ? std::string("\x05\x01\x02", 3) : std::string("\x05\x01\x00", 3);
  co_await asio::async_write(proxy, asio::buffer(greeting), use_awaitable);
  std::array<std::uint8_t, 2> chosen{};
  co_await asio::async_read(proxy, asio::buffer(chosen), use_awaitable);
  if (chosen[0] != 5 || chosen[1] != (with_password ? 2 : 0)) refuse();
  if (with_password) {
    std::string login;
    login += '\x01';
    login += static_cast<char>(proxy_->user.size());
    login += proxy_->user;
    login += static_cast<char>(proxy_->password.size());
    login += proxy_->password;
    co_await asio::async_write(proxy, asio::buffer(login), use_awaitable);
    std::array<std::uint8_t, 2> status{};
    co_await asio::async_read(proxy, asio::buffer(status), use_awaitable);
    if (status[0] != 1 || status[1] != 0) refuse();
  }
  if (endpoint_.host.size() > 255) refuse();
  auto port = static_cast<std::uint16_t>(std::stoi(endpoint_.port));
  std::string request("\x05\x01\x00\x03", 4);
  request += static_cast<char>(endpoint_.host.size());
  request += endpoint_.host;
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

asio::awaitable<api_reply> bot_api::exchange(request r, std::chrono::seconds timeout, std::string* raw_body,
                                             std::size_t max_bytes) {
  api_reply reply;
  http::request<http::string_body> req{r.method, r.target, 11};
  req.set(http::field::host, endpoint_.host);
  req.set(http::field::user_agent, "xconn-telegram");
  if (!r.content_type.empty()) req.set(http::field::content_type, r.content_type);
  req.body() = std::move(r.body);
  req.prepare_payload();

  // A connection kept from an earlier call is tried first; if the server closed it meanwhile (nothing came back),
  // the call goes once more on a new one. Only this plugin's one event-loop thread touches idle_.
  for (int attempt = 0;; ++attempt) {
    connection c;
    bool reused = attempt == 0 && !idle_.empty();
    if (reused) {
      c = std::move(idle_.back());
      idle_.pop_back();
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(max_bytes);
    std::string step = "exchange_failed";
    try {
      if (!reused) c = co_await open(timeout, step);
      step = "exchange_failed";
      if (c.tls) {
        beast::get_lowest_layer(*c.tls).expires_after(timeout);
        co_await send_and_read(*c.tls, req, parser);
      } else {
        c.plain->expires_after(timeout);
        co_await send_and_read(*c.plain, req, parser);
      }
    } catch (const boost::system::system_error& e) {
      if (reused && !parser.got_some()) continue;
      reply.transport_error = e.code() == beast::error::timeout ? "timeout"
                              : step == "proxy_failed"          ? "proxy_refused"
                                                                : step;
      co_return reply;
    }
    auto& res = parser.get();
    if (res.keep_alive() && idle_.size() < max_idle) idle_.push_back(std::move(c));
    reply.http_status = static_cast<int>(res.result_int());
    if (raw_body && reply.http_status == 200) {
      reply.ok = true;
      *raw_body = std::move(res.body());
    } else {
      read_answer(res.body(), reply);
    }
    co_return reply;
  }
}

}  // namespace telegram
