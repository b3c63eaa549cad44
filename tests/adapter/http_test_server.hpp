// A loopback HTTP/1.1 server for the HTTP client's tests, on its own thread: plain or TLS (a certificate for
// 127.0.0.1 made at start with the openssl tool), each request answered by a script the test sets, every request and
// accepted connection recorded.
#pragma once

#include "support/test_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace http_test {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::use_awaitable;

struct seen_request {
  std::string method, target, content_type, body, host;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct scripted_answer {
  enum class mode { answer, garbled, silent, close };
  mode how = mode::answer;
  int status = 200;
  std::string body = R"({"ok":true})";
  std::vector<std::pair<std::string, std::string>> headers;
  bool chunked = false;

  static scripted_answer acting(mode how) {
    scripted_answer a;
    a.how = how;
    return a;
  }
  static scripted_answer with(int status, std::string body, bool chunked = false) {
    scripted_answer a;
    a.status = status;
    a.body = std::move(body);
    a.chunked = chunked;
    return a;
  }
};

class server {
 public:
  explicit server(bool tls = false) : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    if (tls) {
      auto cert = dir_.path() / "cert.pem", key = dir_.path() / "key.pem";
      auto command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
                     "subjectAltName=IP:127.0.0.1 -keyout " + key.string() + " -out " + cert.string() + " >/dev/null 2>&1";
      if (std::system(command.c_str()) != 0) ADD_FAILURE() << "openssl could not make a certificate";
      tls_.emplace(asio::ssl::context::tls_server);
      tls_->use_certificate_chain_file(cert.string());
      tls_->use_private_key_file(key.string(), asio::ssl::context::pem);
    }
    asio::co_spawn(io_, accept(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~server() {
    io_.stop();
    thread_.join();
  }

  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  std::string url() const { return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port()); }
  std::string ca_file() const { return (dir_.path() / "cert.pem").string(); }
  void script(std::function<scripted_answer(const seen_request&)> f) {
    std::lock_guard lock(mutex_);
    script_ = std::move(f);
  }
  int connections() const { return connections_; }
  std::vector<seen_request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  asio::awaitable<void> accept() {
    for (;;) {
      auto socket = co_await acceptor_.async_accept(use_awaitable);
      ++connections_;
      asio::co_spawn(io_, serve(beast::tcp_stream(std::move(socket))), asio::detached);
    }
  }

  asio::awaitable<void> serve(beast::tcp_stream plain) {
    try {
      if (!tls_) co_return co_await talk(plain);
      beast::ssl_stream<beast::tcp_stream> secure(std::move(plain), *tls_);
      co_await secure.async_handshake(asio::ssl::stream_base::server, use_awaitable);
      co_await talk(secure);
    } catch (...) {
    }
  }

  template <class Stream>
  asio::awaitable<void> talk(Stream& stream) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      co_await http::async_read(stream, buffer, req, use_awaitable);
      seen_request seen{std::string(req.method_string()), std::string(req.target()),
                        std::string(req[http::field::content_type]), req.body(), std::string(req[http::field::host]), {}};
      for (const auto& field : req) seen.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      std::function<scripted_answer(const seen_request&)> script;
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(seen);
        script = script_;
      }
      auto answer = script ? script(seen) : scripted_answer{};
      if (answer.how == scripted_answer::mode::close) co_return;
      if (answer.how == scripted_answer::mode::silent) {
        asio::steady_timer wait(io_, std::chrono::seconds(30));
        co_await wait.async_wait(use_awaitable);
        co_return;
      }
      if (answer.how == scripted_answer::mode::garbled) {
        std::string junk = "this is no HTTP answer\r\n\r\n";
        co_await asio::async_write(stream, asio::buffer(junk), use_awaitable);
        co_return;
      }
      http::response<http::string_body> res{static_cast<http::status>(answer.status), 11};
      for (const auto& [name, value] : answer.headers) res.set(name, value);
      res.body() = answer.body;
      res.keep_alive(req.keep_alive());
      if (answer.chunked)
        res.chunked(true);
      else
        res.prepare_payload();
      co_await http::async_write(stream, res, use_awaitable);
      if (!req.keep_alive()) co_return;
    }
  }

  xconn::test::temp_dir dir_;                // the certificate, which the TLS context outlives
  std::optional<asio::ssl::context> tls_;    // before io_: the pending connections go with io_
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::function<scripted_answer(const seen_request&)> script_;
  std::vector<seen_request> requests_;
  std::atomic<int> connections_{0};
};

// Runs one client call on io (the client's own loop) to its end.
template <class T>
T run_on(asio::io_context& io, asio::awaitable<T> call) {
  auto done = asio::co_spawn(io, std::move(call), asio::use_future);
  io.restart();
  io.run();
  return done.get();
}

}  // namespace http_test
