#include "receiver_client.hpp"

#include "kit/tls_client.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace webhook {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;

namespace {

constexpr std::size_t max_answer_bytes = 64 * 1024;  // a receiver's answer is read and dropped; past this, not reused

std::string receiver_key(const receiver_url& url) { return (url.tls ? "https " : "http ") + url.host + " " + url.port; }

// The answer's status (and Retry-After), then its body within the limit; false when the body could not be read
// whole (the connection is then not reused).
template <class Stream>
asio::awaitable<bool> exchange(Stream& stream, http::request<http::string_body>& req, post_result& result,
                               bool& got_some) {
  co_await http::async_write(stream, req, use_awaitable);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_answer_bytes);
  if (req.method() == http::verb::head) parser.skip(true);  // a HEAD's answer has headers alone
  try {
    co_await http::async_read_header(stream, buffer, parser, use_awaitable);
  } catch (...) {
    got_some = parser.got_some() || buffer.size() > 0;
    throw;
  }
  got_some = true;
  const auto& res = parser.get();
  result.http_status = static_cast<int>(res.result_int());
  if (auto it = res.find(http::field::retry_after); it != res.end()) {
    auto value = std::string(it->value());
    if (!value.empty() && value.size() <= 6 && value.find_first_not_of("0123456789") == std::string::npos)
      result.retry_after_s = std::stoi(value);
  }
  boost::system::error_code ec;
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
  co_return !ec && parser.is_done() && parser.get().keep_alive();
}

}  // namespace

receiver_client::receiver_client(asio::io_context& io, const std::string& ca_file, std::string* error) : io_(io) {
  auto refused = xconn::kit::trust_for_clients(tls_, ca_file);
  if (error) *error = refused;
}

asio::awaitable<receiver_client::connection> receiver_client::open(const receiver_url& url,
                                                                   std::chrono::milliseconds timeout,
                                                                   std::string& step) {
  connection c;
  c.plain = std::make_unique<beast::tcp_stream>(io_);
  c.plain->expires_after(timeout);
  asio::ip::tcp::resolver resolver(io_);
  step = "resolve_failed";
  auto found = co_await resolver.async_resolve(url.host, url.port, use_awaitable);
  step = "connect_failed";
  co_await c.plain->async_connect(found, use_awaitable);
  c.plain->socket().set_option(asio::ip::tcp::no_delay(true));
  if (url.tls) {
    step = "tls_failed";
    c.tls = co_await xconn::kit::start_tls(*c.plain, tls_, url.host);
    c.plain.reset();
  }
  co_return c;
}

asio::awaitable<post_result> receiver_client::post(const receiver_url& url, const std::string& body,
                                                   const header_list& headers, std::chrono::milliseconds timeout) {
  http::request<http::string_body> req{http::verb::post, url.target, 11};
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  co_return co_await send(std::move(req), url, headers, timeout);
}

asio::awaitable<post_result> receiver_client::head(const receiver_url& url, const header_list& headers,
                                                   std::chrono::milliseconds timeout) {
  co_return co_await send(http::request<http::string_body>{http::verb::head, url.target, 11}, url, headers, timeout);
}

asio::awaitable<post_result> receiver_client::send(http::request<http::string_body> req, const receiver_url& url,
                                                   const header_list& headers, std::chrono::milliseconds timeout) {
  req.set(http::field::host, url.authority);
  req.set(http::field::user_agent, "xconn-webhook");
  for (const auto& [name, value] : headers) req.set(name, value);
  if (req.method() != http::verb::head) req.prepare_payload();
  req.keep_alive(true);
  const auto key = receiver_key(url);
  const auto deadline = std::chrono::steady_clock::now() + timeout;

  // A connection kept from an earlier POST is tried first; if the receiver closed it meanwhile (nothing came
  // back), the POST goes once more on a new one. Only this plugin's one event-loop thread touches idle_.
  for (int attempt = 0;; ++attempt) {
    post_result result;
    connection c;
    auto& kept = idle_[key];
    bool reused = attempt == 0 && !kept.empty();
    if (reused) {
      c = std::move(kept.back());
      kept.pop_back();
    }
    std::string step = "exchange_failed";
    bool got_some = false, reusable = false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.transport_error = "timeout";
      co_return result;
    }
    try {
      if (!reused) c = co_await open(url, left, step);
      step = "exchange_failed";
      if (c.tls) {
        beast::get_lowest_layer(*c.tls).expires_at(deadline);
        reusable = co_await exchange(*c.tls, req, result, got_some);
      } else {
        c.plain->expires_at(deadline);
        reusable = co_await exchange(*c.plain, req, result, got_some);
      }
    } catch (const boost::system::system_error& e) {
      if (reused && !got_some) continue;
      result.transport_error = e.code() == beast::error::timeout ? "timeout" : step;
      co_return result;
    }
    if (reusable) {
      if (idle_.size() > max_receivers_kept) idle_.clear();
      auto& pool = idle_[key];
      if (pool.size() < max_idle_per_receiver) pool.push_back(std::move(c));
    }
    co_return result;
  }
}

}  // namespace webhook
