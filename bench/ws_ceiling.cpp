// The ceiling: the least a WebSocket server can do per frame with Beast on this machine. It answers every
// frame with the same bytes (a frame of the same size) and nothing else: no JSON, no store, no plugin. xconnd's
// throughput is reported as a share of this one's, measured by the same load tool with the same frames.
// A plain HTTP GET /bytes/N answers N bytes from memory: the ceiling of xconnd's file downloads.
//
// usage: ws_ceiling [--listen 127.0.0.1:0] [--threads N]   (prints "listening on HOST:PORT"; stops on SIGTERM)
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <charconv>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class echo_session : public std::enable_shared_from_this<echo_session> {
 public:
  explicit echo_session(beast::tcp_stream stream) : ws_(std::move(stream)) {}

  void start(http::request<http::string_body> upgrade) {
    beast::get_lowest_layer(ws_).expires_never();
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.async_accept(upgrade, [self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->read();
    });
  }

 private:
  void read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return;
      self->ws_.text(self->ws_.got_text());
      self->ws_.async_write(self->buffer_.data(), [self](beast::error_code ec, std::size_t) {
        if (ec) return;
        self->buffer_.consume(self->buffer_.size());
        self->read();
      });
    });
  }

  websocket::stream<beast::tcp_stream, false> ws_;  // false: no permessage-deflate code
  beast::flat_buffer buffer_;
};

// The first request of a connection: an upgrade becomes an echo_session; GET /bytes/N is answered, keep-alive.
class http_session : public std::enable_shared_from_this<http_session> {
 public:
  explicit http_session(tcp::socket socket) : stream_(std::move(socket)) {}

  void read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return;
      if (websocket::is_upgrade(self->request_))
        return std::make_shared<echo_session>(std::move(self->stream_))->start(std::move(self->request_));
      self->answer();
    });
  }

 private:
  void answer() {
    constexpr std::string_view prefix = "/bytes/";
    const std::string_view target = request_.target();
    std::uint64_t n = 0;
    const bool bytes = request_.method() == http::verb::get && target.starts_with(prefix) &&
                       std::from_chars(target.data() + prefix.size(), target.data() + target.size(), n).ec ==
                           std::errc() &&
                       n <= (1ull << 30);
    response_.result(bytes ? http::status::ok : http::status::not_found);
    if (!bytes) n = 0;
    if (response_.body().size() != n) response_.body().assign(n, 'x');  // built once per size a connection asks
    response_.set(http::field::content_type, "application/octet-stream");
    response_.keep_alive(request_.keep_alive());
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec && self->response_.keep_alive()) self->read();
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_{http::status::ok, 11};
};

void accept_next(tcp::acceptor& acceptor, asio::io_context& io) {
  acceptor.async_accept(asio::make_strand(io), [&acceptor, &io](beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      socket.set_option(tcp::no_delay(true));
      std::make_shared<http_session>(std::move(socket))->read();
    }
    if (acceptor.is_open()) accept_next(acceptor, io);
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen = "127.0.0.1:0";
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));  // as xconnd's io_threads: 0
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i], value = argv[i + 1];
    if (name == "--listen") listen = value;
    else if (name == "--threads") threads = std::clamp(std::atoi(value.c_str()), 1, 256);
    else {
      std::cerr << "usage: ws_ceiling [--listen HOST:PORT] [--threads N]\n";
      return 2;
    }
  }
  auto colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  beast::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec || colon == std::string::npos) {
    std::cerr << "ws_ceiling: --listen wants IP:PORT\n";
    return 2;
  }
  asio::io_context io(threads);
  tcp::acceptor acceptor(io);
  tcp::endpoint endpoint(address, static_cast<unsigned short>(std::atoi(listen.c_str() + colon + 1)));
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint, ec);
  if (ec) {
    std::cerr << "ws_ceiling: cannot listen on " << listen << ": " << ec.message() << "\n";
    return 1;
  }
  acceptor.listen();
  auto bound = acceptor.local_endpoint();
  std::fprintf(stderr, "listening on %s:%u\n", bound.address().to_string().c_str(), unsigned(bound.port()));
  accept_next(acceptor, io);

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) { io.stop(); });
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
}
