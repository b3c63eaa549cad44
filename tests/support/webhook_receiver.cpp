#include "support/webhook_receiver.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <optional>
#include <thread>

namespace xconn::test {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string webhook_signature(const std::string& secret, std::int64_t t, const std::string& body) {
  std::string signed_text = std::to_string(t) + "." + body;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), digest, &size);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += "0123456789abcdef"[digest[i] >> 4], hex += "0123456789abcdef"[digest[i] & 15];
  return "t=" + std::to_string(t) + ",v1=" + hex;
}

namespace {

// Whether header signs body with secret, with t within 300 s of now.
bool signature_matches(const std::string& header, const std::string& secret, const std::string& body) {
  auto comma = header.find(",v1=");
  if (!header.starts_with("t=") || comma == std::string::npos) return false;
  std::int64_t t = 0;
  try {
    t = std::stoll(header.substr(2, comma - 2));
  } catch (...) {
    return false;
  }
  if (std::abs(unix_now() - t) > 300) return false;
  auto want = webhook_signature(secret, t, body);
  return want.size() == header.size() && CRYPTO_memcmp(want.data(), header.data(), want.size()) == 0;
}

}  // namespace

json::object webhook_receiver::request::json() const {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  return !ec && v.is_object() ? v.as_object() : json::object{};
}

struct webhook_receiver::impl {
  std::string secret;
  temp_dir dir;  // its certificate
  asio::io_context io;
  std::optional<asio::ssl::context> tls;
  tcp::acceptor acceptor{io};
  std::thread runner;
  mutable std::mutex mutex;
  std::deque<int> script;
  std::vector<request> seen;
  std::vector<std::shared_ptr<void>> held;  // connections of requests never answered

  // One connection: request after request, each answered as scripted.
  template <class Stream>
  void serve(std::shared_ptr<Stream> socket) {
    auto buffer = std::make_shared<beast::flat_buffer>();
    auto req = std::make_shared<http::request<http::string_body>>();
    http::async_read(*socket, *buffer, *req, [this, socket, buffer, req](beast::error_code ec, std::size_t) {
      if (ec) return;
      request r;
      r.method = std::string(req->method_string());
      r.target = std::string(req->target());
      r.body = req->body();
      for (const auto& f : *req) {
        std::string name(f.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[name] = std::string(f.value());
      }
      r.signature_ok = signature_matches(r.headers["x-xconn-signature"], secret, r.body);
      r.at = std::chrono::steady_clock::now();
      int status = 200;
      {
        std::lock_guard lock(mutex);
        seen.push_back(std::move(r));
        if (!script.empty()) {
          status = script.front();
          script.pop_front();
        }
        if (status == 0) {
          held.push_back(socket);
          return;
        }
      }
      auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(status), 11);
      res->set(http::field::content_type, "application/json");
      if (req->method() != http::verb::head) res->body() = R"({"received":true})";  // a HEAD's answer has no body
      res->keep_alive(req->keep_alive());
      res->prepare_payload();
      http::async_write(*socket, *res, [this, socket, res](beast::error_code ec, std::size_t) {
        if (!ec && res->keep_alive()) serve(socket);
      });
    });
  }

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) return;
      if (tls) {
        auto stream = std::make_shared<asio::ssl::stream<tcp::socket>>(std::move(socket), *tls);
        stream->async_handshake(asio::ssl::stream_base::server, [this, stream](beast::error_code ec) {
          if (!ec) serve(stream);
        });
      } else {
        serve(std::make_shared<tcp::socket>(std::move(socket)));
      }
      accept();
    });
  }
};

webhook_receiver::webhook_receiver(std::string secret, bool tls) : impl_(std::make_unique<impl>()), tls_(tls) {
  impl_->secret = std::move(secret);
  if (tls) {
    auto cert = impl_->dir.path() / "cert.pem", key = impl_->dir.path() / "key.pem";
    auto command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
                   "-keyout " + key.string() + " -out " + cert.string() + " >/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) ADD_FAILURE() << "openssl could not make a certificate";
    impl_->tls.emplace(asio::ssl::context::tls_server);
    impl_->tls->use_certificate_chain_file(cert.string());
    impl_->tls->use_private_key_file(key.string(), asio::ssl::context::pem);
  }
  tcp::endpoint at(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(at.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(at);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->accept();
  impl_->runner = std::thread([this] { impl_->io.run(); });
}

webhook_receiver::~webhook_receiver() {
  impl_->io.stop();
  impl_->runner.join();
}

std::string webhook_receiver::ca_file() const { return (impl_->dir.path() / "cert.pem").string(); }

void webhook_receiver::script(std::vector<int> statuses) {
  std::lock_guard lock(impl_->mutex);
  impl_->script.assign(statuses.begin(), statuses.end());
}

std::vector<webhook_receiver::request> webhook_receiver::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->seen;
}

std::vector<webhook_receiver::request> webhook_receiver::requests(const std::string& method) const {
  std::vector<request> of_method;
  for (auto& r : requests())
    if (r.method == method) of_method.push_back(std::move(r));
  return of_method;
}

std::size_t webhook_receiver::count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->seen.size();
}

struct keepalive_client::impl {
  unsigned short port;
  asio::io_context io;
  std::unique_ptr<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
};

keepalive_client::keepalive_client(unsigned short port) : impl_(std::make_unique<impl>()) { impl_->port = port; }
keepalive_client::~keepalive_client() = default;

http_reply keepalive_client::post(const std::string& target, const std::map<std::string, std::string>& headers,
                                  const std::string& body) {
  http_reply reply;
  auto& s = *impl_;
  beast::error_code ec;
  if (!s.stream) {
    s.stream = std::make_unique<beast::tcp_stream>(s.io);
    s.buffer.clear();
    s.stream->socket().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.port), ec);
    if (ec) {
      s.stream.reset();
      return reply;
    }
    s.stream->socket().set_option(tcp::no_delay(true));
  }
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();
  // Blocking calls, bounded: the socket gets a receive and send timeout so a silent server cannot hang the test.
  struct timeval tv{10, 0};
  setsockopt(s.stream->socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(s.stream->socket().native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  http::write(s.stream->socket(), req, ec);
  http::response<http::string_body> res;
  if (!ec) http::read(s.stream->socket(), s.buffer, res, ec);
  if (ec) {
    s.stream.reset();
    return reply;
  }
  reply.status = res.result_int();
  reply.body = res.body();
  for (const auto& f : res) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    reply.headers[name] = std::string(f.value());
  }
  if (!res.keep_alive()) s.stream.reset();
  return reply;
}

}  // namespace xconn::test
