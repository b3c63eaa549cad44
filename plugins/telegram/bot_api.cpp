#include "bot_api.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

#include <openssl/rand.h>

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
                 std::optional<api_endpoint> proxy)
    : io_(io), endpoint_(std::move(endpoint)), proxy_(std::move(proxy)) {
  boost::system::error_code ec;
  tls_.set_default_verify_paths(ec);
  if (!ca_file.empty()) {
    tls_.load_verify_file(ca_file, ec);
    if (ec && error) *error = "config.ca_file: cannot be read as PEM certificates";
  }
  tls_.set_verify_mode(asio::ssl::verify_peer);
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

asio::awaitable<api_reply> bot_api::exchange(request r, std::chrono::seconds timeout, std::string* raw_body,
                                             std::size_t max_bytes) {
  api_reply reply;
  http::request<http::string_body> req{r.method, r.target, 11};
  req.set(http::field::host, endpoint_.host);
  req.set(http::field::user_agent, "xconn-telegram");
  if (!r.content_type.empty()) req.set(http::field::content_type, r.content_type);
  req.body() = std::move(r.body);
  req.prepare_payload();
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_bytes);

  asio::ip::tcp::resolver resolver(io_);
  beast::tcp_stream tcp(io_);
  std::string step = "resolve_failed";
  try {
    tcp.expires_after(timeout);
    const auto& first_hop = proxy_ ? *proxy_ : endpoint_;
    auto found = co_await resolver.async_resolve(first_hop.host, first_hop.port, use_awaitable);
    step = "connect_failed";
    co_await tcp.async_connect(found, use_awaitable);
    if (proxy_) {
      // A tunnel to the Bot API (RFC 9110 §9.3.6): the proxy sees only the host and port, never a token.
      step = "proxy_failed";
      auto authority = (endpoint_.host.find(':') != std::string::npos ? "[" + endpoint_.host + "]" : endpoint_.host) +
                       ":" + endpoint_.port;
      http::request<http::empty_body> connect{http::verb::connect, authority, 11};
      connect.set(http::field::host, authority);
      co_await http::async_write(tcp, connect, use_awaitable);
      beast::flat_buffer buffer;
      http::response_parser<http::empty_body> answer;
      answer.skip(true);  // a CONNECT answer has no body
      co_await http::async_read_header(tcp, buffer, answer, use_awaitable);
      if (answer.get().result() != http::status::ok || buffer.size() != 0) {
        reply.transport_error = "proxy_refused";
        co_return reply;
      }
    }
    if (endpoint_.tls) {
      beast::ssl_stream<beast::tcp_stream> tls(std::move(tcp), tls_);
      if (!SSL_set_tlsext_host_name(tls.native_handle(), endpoint_.host.c_str())) {
        reply.transport_error = "tls_failed";
        co_return reply;
      }
      tls.set_verify_callback(asio::ssl::host_name_verification(endpoint_.host));
      step = "tls_failed";
      co_await tls.async_handshake(asio::ssl::stream_base::client, use_awaitable);
      step = "exchange_failed";
      co_await send_and_read(tls, req, parser);
      beast::get_lowest_layer(tls).close();
    } else {
      step = "exchange_failed";
      co_await send_and_read(tcp, req, parser);
      tcp.close();
    }
  } catch (const boost::system::system_error& e) {
    reply.transport_error = e.code() == beast::error::timeout ? "timeout" : step;
    co_return reply;
  }
  auto& res = parser.get();
  reply.http_status = static_cast<int>(res.result_int());
  if (raw_body) {
    reply.ok = reply.http_status == 200;
    if (reply.ok) *raw_body = std::move(res.body());
    else read_answer(res.body(), reply);
    co_return reply;
  }
  read_answer(res.body(), reply);
  co_return reply;
}

}  // namespace telegram
