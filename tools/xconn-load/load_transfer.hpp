// One HTTP/1.1 keep-alive connection of the upload and download scenarios, on one client thread. An upload is
// one POST {base}/files/uploads of a --file-bytes file, done at its 201 (xconnd answers once the bytes are
// durable); a download is one GET of a file uploaded at set-up, its bytes dropped as they arrive (the client
// keeps none: /dev/null). Against ws_ceiling a download is a GET /bytes/N of as many bytes from its memory.
#pragma once

#include "load_run.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace xconn::load {

class transfer_client : public std::enable_shared_from_this<transfer_client> {
 public:
  // channel_id: the signed-in channel the requests name ("" against the ceiling).
  transfer_client(boost::asio::io_context& io, run_state& run, const boost::asio::ip::tcp::endpoint& endpoint,
                  std::string channel_id);
  ~transfer_client();

  // Connects and, for a download from xconnd, uploads the file it will fetch; done("") or done(why not).
  void set_up(std::function<void(std::string)> done);
  void start();   // one request after another until the run stops
  void finish();  // counts a request still unanswered and closes the connection
  driver_totals take_totals() { return std::move(totals_); }

 private:
  using clock = std::chrono::steady_clock;
  void send_next();
  void send_upload();
  void read_upload_answer();
  void send_download();
  void read_download_body();
  void end_request(std::string error_code);  // "" when it succeeded
  void fail_connection(const std::string& what, boost::system::error_code ec);

  struct connection;  // the Beast stream, requests and parsers, instantiated in load_transfer.cpp alone
  std::unique_ptr<connection> io_;
  run_state& run_;
  const boost::asio::ip::tcp::endpoint endpoint_;
  const std::string channel_id_;
  std::function<void(std::string)> set_up_done_;  // set while the set-up's upload is in flight
  std::string file_ref_;
  clock::time_point sent_;
  std::uint64_t received_ = 0;
  bool busy_ = false, finished_ = false;
  driver_totals totals_;
};

}  // namespace xconn::load
