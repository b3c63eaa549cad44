#include "support/wire_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>

namespace xconn::test {
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace json = boost::json;
using tcp = boost::asio::ip::tcp;

json::value http_reply::json() const {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  return ec ? json::value() : v;
}

http_reply http_call(unsigned short port, const std::string& method, const std::string& target,
                     const std::map<std::string, std::string>& headers, const std::string& body) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(10));
  http_reply reply;
  stream.async_connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port),
                       [&](beast::error_code ec) {
                         if (ec) return;
                         auto req = std::make_shared<http::request<http::string_body>>(
                             http::string_to_verb(method), target, 11);
                         req->set(http::field::host, "127.0.0.1");
                         for (const auto& [k, v] : headers) req->set(k, v);
                         req->body() = body;
                         req->prepare_payload();
                         http::async_write(stream, *req, [&, req](beast::error_code ec, std::size_t) {
                           if (ec) return;
                           auto buffer = std::make_shared<beast::flat_buffer>();
                           auto res = std::make_shared<http::response<http::string_body>>();
                           http::async_read(stream, *buffer, *res, [&, buffer, res](beast::error_code ec, std::size_t) {
                             if (ec) return;
                             reply.status = res->result_int();
                             reply.body = res->body();
                             for (const auto& f : *res) {
                               std::string name(f.name_string());
                               for (auto& c : name) c = static_cast<char>(std::tolower(c));
                               reply.headers[name] = std::string(f.value());
                             }
                           });
                         });
                       });
  io.run();
  return reply;
}

struct ws_client::state {
  boost::asio::io_context io;
  websocket::stream<beast::tcp_stream, false> ws{io};  // false: no permessage-deflate code
  beast::flat_buffer buffer;
  bool closed = false;
  bool read_pending = false;  // an async_read started by receive() and not yet complete
  bool read_done = false;
  beast::error_code read_ec;
  std::string subprotocol;
};

ws_client::ws_client() : s_(std::make_unique<state>()) {}
ws_client::~ws_client() = default;

bool ws_client::closed() const { return s_->closed; }
std::string ws_client::selected_subprotocol() const { return s_->subprotocol; }

bool ws_client::send_binary(const std::string& bytes) {
  beast::error_code ec;
  s_->ws.binary(true);
  s_->ws.write(boost::asio::buffer(bytes), ec);
  s_->ws.text(true);
  return !ec;
}

bool ws_client::drain_raw_until_closed() {
  auto& sock = beast::get_lowest_layer(s_->ws).socket();
  sock.non_blocking(true);
  char byte;
  beast::error_code ec;
  // A closed peer reads as EOF once every frame sent before it has been drained.
  while (true) {
    sock.read_some(boost::asio::buffer(&byte, 1), ec);
    if (ec == boost::asio::error::would_block) return false;
    if (ec) return true;
  }
}

std::unique_ptr<ws_client> ws_client::connect(unsigned short port, const std::string& target, const options& opts,
                                              int* failed_status) {
  std::unique_ptr<ws_client> c(new ws_client());
  auto& lowest = beast::get_lowest_layer(c->s_->ws);
  lowest.expires_after(std::chrono::seconds(10));
  beast::error_code ec;
  lowest.socket().connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), ec);
  if (failed_status) *failed_status = 0;
  if (ec) return nullptr;
  c->s_->ws.set_option(websocket::stream_base::decorator([opts](websocket::request_type& req) {
    if (!opts.key.empty()) req.set(http::field::authorization, "Bearer " + opts.key);
    if (!opts.subprotocol.empty()) req.set(http::field::sec_websocket_protocol, opts.subprotocol);
  }));
  websocket::response_type res;
  bool done = false;
  c->s_->ws.async_handshake(res, "127.0.0.1", target, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  c->s_->io.run_for(std::chrono::seconds(10));
  c->s_->io.restart();
  if (failed_status) *failed_status = res.result_int();
  if (!done || ec) return nullptr;
  lowest.expires_never();
  c->s_->ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
  auto proto = res.find(http::field::sec_websocket_protocol);
  if (proto != res.end()) c->s_->subprotocol = std::string(proto->value());
  return c;
}

void ws_client::send(const std::string& text) {
  beast::error_code ec;
  s_->ws.text(true);
  s_->ws.write(boost::asio::buffer(text), ec);
  if (ec) s_->closed = true;
}

std::optional<std::string> ws_client::receive(std::chrono::milliseconds deadline) {
  if (s_->closed) return std::nullopt;
  // A read that outlives its deadline stays pending (cancelling it would ruin the stream): the next call picks
  // it up, so "nothing arrived in time" leaves the socket usable.
  if (!s_->read_pending) {
    s_->buffer.clear();
    s_->read_pending = true;
    s_->read_done = false;
    s_->ws.async_read(s_->buffer, [this](beast::error_code e, std::size_t) {
      s_->read_ec = e;
      s_->read_done = true;
    });
  }
  s_->io.run_for(deadline);
  s_->io.restart();
  if (!s_->read_done) return std::nullopt;
  s_->read_pending = false;
  if (s_->read_ec) {
    s_->closed = true;
    return std::nullopt;
  }
  return beast::buffers_to_string(s_->buffer.data());
}

std::optional<json::object> ws_client::receive_json(std::chrono::milliseconds deadline) {
  auto text = receive(deadline);
  if (!text) return std::nullopt;
  boost::system::error_code ec;
  auto v = json::parse(*text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return v.as_object();
}

int ws_client::wait_closed(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!s_->closed && std::chrono::steady_clock::now() < until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !receive(left)) break;
  }
  if (!s_->closed) return -1;
  return s_->ws.reason().code;
}

std::optional<json::object> ws_client::hello(const json::object& overrides) {
  json::object payload{{"connector_card_id", "im.echo"},
                       {"connector_id", ""},
                       {"protocol_version", "3.0"},
                       {"supported_profiles", json::array{"xagent.im.v1", "xagent.im.v2"}}};
  for (const auto& kv : overrides) payload[kv.key()] = kv.value();
  send_json(make_packet("connector.hello", std::move(payload)));
  return receive_json();
}

json::object make_packet(const std::string& type, json::object payload, const std::string& connector_channel_id) {
  static std::atomic<int> counter{0};
  int n = ++counter;
  json::object p{{"schema", "xagent.connector.packet/v1"},
                 {"packet_id", "pkt_test_" + std::to_string(n)},
                 {"request_id", "req_test_" + std::to_string(n)},
                 {"type", type},
                 {"time", 1790000000000},
                 {"payload", std::move(payload)}};
  if (!connector_channel_id.empty()) p["connector_channel_id"] = connector_channel_id;
  return p;
}

}  // namespace xconn::test
