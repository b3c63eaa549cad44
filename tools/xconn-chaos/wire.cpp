#include "wire.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>

namespace xconn::chaos {
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace json = boost::json;
using tcp = boost::asio::ip::tcp;

json::value http_answer::json() const {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  return ec ? json::value() : v;
}

http_answer http_request(unsigned short port, const std::string& method, const std::string& target,
                         const std::map<std::string, std::string>& headers, const std::string& body,
                         std::chrono::milliseconds deadline) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(deadline);
  http_answer answer;
  auto req = std::make_shared<http::request<http::string_body>>(http::string_to_verb(method), target, 11);
  req->set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req->set(k, v);
  req->body() = body;
  req->prepare_payload();
  auto buffer = std::make_shared<beast::flat_buffer>();
  auto res = std::make_shared<http::response<http::string_body>>();
  stream.async_connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), [&](beast::error_code ec) {
    if (ec) return;
    http::async_write(stream, *req, [&](beast::error_code ec, std::size_t) {
      if (ec) return;
      http::async_read(stream, *buffer, *res, [&](beast::error_code ec, std::size_t) {
        if (ec) return;
        answer.status = res->result_int();
        answer.body = std::move(res->body());
      });
    });
  });
  io.run();
  return answer;
}

struct ws_socket::state {
  boost::asio::io_context io;
  websocket::stream<beast::tcp_stream, false> ws{io};
  beast::flat_buffer buffer;
  bool closed = false;
  bool read_pending = false;
  bool read_done = false;
  beast::error_code read_ec;
};

ws_socket::ws_socket() : s_(std::make_unique<state>()) {}
ws_socket::~ws_socket() = default;
bool ws_socket::closed() const { return s_->closed; }

std::unique_ptr<ws_socket> ws_socket::connect(unsigned short port, const std::string& plugin, const std::string& key) {
  std::unique_ptr<ws_socket> c(new ws_socket());
  auto& lowest = beast::get_lowest_layer(c->s_->ws);
  lowest.expires_after(std::chrono::seconds(10));
  beast::error_code ec;
  lowest.socket().connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return nullptr;
  // As an agent would: with Nagle on, a request written right after an ack waits for the daemon's delayed ACK
  // (about 40 ms), which tests/failover would count as the daemon's time to reopen a channel.
  lowest.socket().set_option(tcp::no_delay(true), ec);
  c->s_->ws.set_option(websocket::stream_base::decorator([key](websocket::request_type& req) {
    req.set(http::field::authorization, "Bearer " + key);
    req.set(http::field::sec_websocket_protocol, "xagent.connector.packet.v1");
  }));
  websocket::response_type res;
  bool done = false;
  c->s_->ws.async_handshake(res, "127.0.0.1", "/connectors/" + plugin + "/ws", [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  c->s_->io.run_for(std::chrono::seconds(10));
  c->s_->io.restart();
  if (!done || ec) return nullptr;
  lowest.expires_never();
  c->s_->ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
  c->s_->ws.text(true);
  return c;
}

bool ws_socket::send(const json::object& packet) {
  if (s_->closed) return false;
  beast::error_code ec;
  s_->ws.write(boost::asio::buffer(json::serialize(packet)), ec);
  if (ec) s_->closed = true;
  return !ec;
}

std::optional<json::object> ws_socket::receive(std::chrono::milliseconds deadline) {
  if (s_->closed) return std::nullopt;
  // A read that outlives its deadline stays pending; the next call picks it up.
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
  boost::system::error_code ec;
  auto v = json::parse(beast::buffers_to_string(s_->buffer.data()), ec);
  if (ec || !v.is_object()) return json::object{};
  return std::move(v.as_object());
}

json::object make_packet(const std::string& type, json::object payload, const std::string& channel,
                         std::string* request_id) {
  static std::atomic<long long> counter{0};
  auto n = std::to_string(++counter);
  json::object p{{"schema", "xagent.connector.packet/v1"},
                 {"packet_id", "pkt_chaos_" + n},
                 {"request_id", "req_chaos_" + n},
                 {"type", type},
                 {"time", 0},
                 {"payload", std::move(payload)}};
  if (!channel.empty()) p["connector_channel_id"] = channel;
  if (request_id) *request_id = "req_chaos_" + n;
  return p;
}

std::string text_at(const json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

const json::object& payload_of(const json::object& packet) {
  static const json::object empty;
  auto* p = packet.if_contains("payload");
  return p && p->is_object() ? p->get_object() : empty;
}

}  // namespace xconn::chaos
