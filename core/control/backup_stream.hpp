// GET /admin/backup (docs/operations.md "Back up and restore"): a compacted copy of the store, made by the store's
// copy thread into a pipe while the server serves, sent as a chunked body. The last chunk is sent only when the
// copy succeeded: a client that sees the body end without it holds no backup. One backup at a time (409).
#pragma once

#include "core/context/connection_slots.hpp"
#include "core/context/server_context.hpp"
#include "core/wire/http_types.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <array>
#include <atomic>
#include <memory>
#include <system_error>

namespace xconn {

class backup_stream : public std::enable_shared_from_this<backup_stream> {
 public:
  backup_stream(boost::beast::tcp_stream&& stream, connection_slots::slot slot, server_context& ctx);
  ~backup_stream();
  // Checks the key, then starts the copy and answers; the connection closes at the end.
  void run(const http_request_header& req);

 private:
  void refuse(http_response res);
  void read_more();
  void finish();

  boost::beast::tcp_stream stream_;
  connection_slots::slot slot_;
  server_context& ctx_;
  std::unique_ptr<boost::asio::posix::stream_descriptor> pipe_;
  std::array<char, 256 * 1024> buffer_{};
  // Set by the copy thread before it closes the pipe's far end, so read at end of stream.
  struct outcome {
    std::atomic<bool> done{false};
    std::error_code error;
  };
  std::shared_ptr<outcome> copied_ = std::make_shared<outcome>();
  std::uint64_t sent_ = 0;
};

}  // namespace xconn
