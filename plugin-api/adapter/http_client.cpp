#include <xconn/adapter/http_client.hpp>

#include <xconn/adapter/tls_client.hpp>

#include "proxy_tunnel.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <limits>

namespace xconn::adapter {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;
using clock = std::chrono::steady_clock;

// One connection to a target (through the proxy's tunnel, when there is one): plain or TLS.
struct http_client::connection {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<tls_stream> tls;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
};

// What a call does with the answer's body: send keeps it (sink null); download streams a 2xx body into sink.
struct http_client::exchange_plan {
  std::size_t max_bytes = 0;
  body_sink* sink = nullptr;
};

namespace {

constexpr std::size_t max_hosts_kept = 256;
constexpr std::size_t download_chunk = 64 * 1024;

struct exchange_state {
  bool got_some = false;   // some of an answer came: a kept connection's failure is then not retried
  bool reusable = false;   // the answer was read whole and the target keeps the connection
  bool too_large = false;  // a download went past its cap
};

int retry_after_of(const http::response_header<>& h) {
  auto it = h.find(http::field::retry_after);
  if (it == h.end()) return -1;
  auto value = std::string(it->value());
  if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(value);
}

template <class Stream>
asio::awaitable<void> exchange(Stream& stream, http::request<http::string_body>& req, http_reply& reply,
                               std::size_t max_answer, std::size_t max_download, http_client::body_sink* sink,
                               exchange_state& state) {
  co_await http::async_write(stream, req, use_awaitable);
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> head;
  head.body_limit(std::numeric_limits<std::uint64_t>::max());  // each body reader below sets its own cap
  if (req.method() == http::verb::head) head.skip(true);        // a HEAD's answer has headers alone
  try {
    co_await http::async_read_header(stream, buffer, head, use_awaitable);
  } catch (...) {
    state.got_some = head.got_some() || buffer.size() > 0;
    throw;
  }
  state.got_some = true;
  const auto& h = head.get();
  reply.status = static_cast<int>(h.result_int());
  reply.retry_after_s = retry_after_of(h);
  if (auto it = h.find(http::field::content_type); it != h.end()) reply.content_type = std::string(it->value());
  for (const auto& field : h) reply.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  const bool keep = h.keep_alive();
  if (head.is_done()) {
    state.reusable = keep;
    co_return;
  }
  if (!sink || reply.status < 200 || reply.status >= 300) {
    http::response_parser<http::string_body> whole{std::move(head)};
    whole.body_limit(max_answer);
    co_await http::async_read(stream, buffer, whole, use_awaitable);
    reply.body = std::move(whole.get().body());
    reply.body_bytes = reply.body.size();
    state.reusable = keep;
    co_return;
  }
  if (auto length = head.content_length(); length && *length > max_download) {
    state.too_large = true;
    co_return;
  }
  http::response_parser<http::buffer_body> chunks{std::move(head)};
  std::array<char, download_chunk> chunk;
  while (!chunks.is_done()) {
    chunks.get().body().data = chunk.data();
    chunks.get().body().size = chunk.size();
    boost::system::error_code ec;
    co_await http::async_read(stream, buffer, chunks, asio::redirect_error(use_awaitable, ec));
    if (ec && ec != http::error::need_buffer) throw boost::system::system_error(ec);
    auto n = chunk.size() - chunks.get().body().size;
    reply.body_bytes += n;
    if (reply.body_bytes > max_download) {
      state.too_large = true;
      co_return;
    }
    if (n > 0) (*sink)(std::string_view(chunk.data(), n));
  }
  state.reusable = keep;
}

}  // namespace

http_client::http_client(asio::io_context& io, options opts, std::string* error)
    : io_(io), options_(std::move(opts)), tls_(asio::ssl::context::tls_client) {
  auto refused = trust_for_clients(tls_, options_.ca_file);
  if (error) *error = refused;
}

http_client::~http_client() = default;

void http_client::close_idle() { idle_.clear(); }

std::size_t http_client::idle_count() const {
  std::size_t n = 0;
  for (const auto& [key, kept] : idle_) n += kept.size();
  return n;
}

asio::awaitable<http_reply> http_client::send(endpoint to, http_request req, std::chrono::milliseconds timeout) {
  co_return co_await run(to, std::move(req), exchange_plan{}, timeout);
}

asio::awaitable<http_reply> http_client::download(endpoint to, http_request req, std::size_t max_bytes,
                                                  body_sink sink, std::chrono::milliseconds timeout) {
  co_return co_await run(to, std::move(req), exchange_plan{max_bytes, &sink}, timeout);
}

asio::awaitable<std::unique_ptr<http_client::connection>> http_client::open(const endpoint& to,
                                                                            clock::time_point deadline,
                                                                            std::string& step) {
  auto c = std::make_unique<connection>();
  c->plain = std::make_unique<beast::tcp_stream>(io_);
  c->plain->expires_at(deadline);
  const auto& proxy = options_.proxy;
  asio::ip::tcp::resolver resolver(io_);
  step = "resolve_failed";
  auto found = co_await resolver.async_resolve(proxy ? proxy->host : to.host, proxy ? proxy->port : to.port,
                                               use_awaitable);
  step = "connect_failed";
  co_await c->plain->async_connect(found, use_awaitable);
  c->plain->socket().set_option(asio::ip::tcp::no_delay(true));
  if (proxy) {
    step = "proxy_refused";
    co_await detail::open_tunnel(*c->plain, *proxy, to);
  }
  if (to.tls) {
    step = "tls_failed";
    c->tls = co_await start_tls(*c->plain, tls_, to.host);
    c->plain.reset();
  }
  co_return c;
}

asio::awaitable<http_reply> http_client::run(const endpoint& to, http_request r, exchange_plan plan,
                                             std::chrono::milliseconds timeout) {
  http::request<http::string_body> req{r.method, r.target, 11};
  req.set(http::field::host, to.authority.empty() ? endpoint::authority_of(to.tls, to.host, to.port) : to.authority);
  req.set(http::field::user_agent, options_.user_agent);
  if (!r.content_type.empty()) req.set(http::field::content_type, r.content_type);
  for (const auto& [name, value] : r.headers) req.set(name, value);
  req.body() = std::move(r.body);
  if (r.method != http::verb::head) req.prepare_payload();
  req.keep_alive(true);
  const auto key = to.pool_key();
  const auto deadline = clock::now() + timeout;

  // A connection kept from an earlier call is tried first; if the target closed it meanwhile (nothing came back),
  // the call goes once more on a new one.
  for (int attempt = 0;; ++attempt) {
    http_reply reply;
    std::unique_ptr<connection> c;
    auto& kept = idle_[key];
    bool reused = attempt == 0 && !kept.empty();
    if (reused) {
      c = std::move(kept.back());
      kept.pop_back();
    }
    if (clock::now() >= deadline) {
      reply.transport_error = "timeout";
      co_return reply;
    }
    std::string step = "exchange_failed";
    exchange_state state;
    try {
      if (!reused) c = co_await open(to, deadline, step);
      step = "exchange_failed";
      c->lowest().expires_at(deadline);
      if (c->tls)
        co_await exchange(*c->tls, req, reply, options_.max_answer_bytes, plan.max_bytes, plan.sink, state);
      else
        co_await exchange(*c->plain, req, reply, options_.max_answer_bytes, plan.max_bytes, plan.sink, state);
    } catch (const std::exception& e) {
      if (reused && !state.got_some) continue;
      auto* system = dynamic_cast<const boost::system::system_error*>(&e);
      http_reply failed;
      failed.transport_error = system && system->code() == beast::error::timeout ? "timeout" : step;
      co_return failed;
    }
    if (state.too_large) {
      reply.transport_error = "too_large";
      co_return reply;
    }
    if (state.reusable) {
      c->lowest().expires_never();
      if (idle_.size() > max_hosts_kept) idle_.clear();
      auto& pool = idle_[key];
      if (pool.size() < options_.max_idle_per_host) pool.push_back(std::move(c));
    }
    co_return reply;
  }
}

}  // namespace xconn::adapter
