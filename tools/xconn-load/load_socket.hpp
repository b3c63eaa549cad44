// One client WebSocket of the load tool (Beast, callbacks on its io_context's single thread): connect and
// upgrade, a read loop handing every text frame to on_frame, and an ordered write queue.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace xconn::load {

struct upgrade_request {
  boost::asio::ip::tcp::endpoint endpoint;
  std::string target;       // e.g. /connectors/echo/ws
  std::string api_key;      // "" sends no Authorization
  std::string subprotocol;  // "" offers none
};

class load_socket : public std::enable_shared_from_this<load_socket> {
 public:
  explicit load_socket(boost::asio::io_context& io);
  ~load_socket();

  std::function<void(std::string_view frame)> on_frame;
  std::function<void(boost::system::error_code)> on_closed;  // the read loop ended (not after close())

  // Connects and upgrades; then reads until the socket closes.
  void start(const upgrade_request& request, std::function<void(boost::system::error_code)> upgraded);
  void send(std::string frame);
  void close();  // after the queued frames
  std::size_t queued() const { return writes_.size(); }

 private:
  void read_next();
  void write_next();
  void close_now();

  struct connection;  // the Beast stream and its read buffer, instantiated in load_socket.cpp alone
  std::unique_ptr<connection> io_;
  std::deque<std::string> writes_;
  bool closing_ = false;
};

}  // namespace xconn::load
