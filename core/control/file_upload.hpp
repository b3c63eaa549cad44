// One upload's body (POST {base}/files/uploads): the multipart reader feeds the `file` part into the file store
// as it arrives, the small fields are kept, and the whole is bounded by files.max_bytes. No I/O here: the HTTP
// session reads the body and feeds it; this says whether to read on, wait for the store, or answer.
#pragma once

#include "core/control/file_routes.hpp"
#include "core/files/file_store.hpp"
#include "core/files/multipart_reader.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace xconn {

class file_upload {
 public:
  enum class step {
    more,      // read on
    wait,      // the store is behind: call when_ready, read on when it runs
    complete,  // the body is whole: call finish
    failed,    // answer failure()
  };

  file_upload(server_context& ctx, http_request_header header, upload_target target);

  step consume(std::string_view bytes);
  step end_of_body();
  void when_ready(std::function<void()> resume);
  // Stores the file's record; answer gets the 201, or the error, once it is durable. On the store's thread.
  void finish(std::function<void(http_response)> answer);
  http_response failure() const;

 private:
  bool on_part(const multipart_reader::part_head& head);
  bool on_data(std::string_view bytes);
  step after(multipart_reader::status s);
  void fail(boost::beast::http::status status, std::string code, std::string message);

  server_context& ctx_;
  http_request_header header_;
  upload_target target_;
  multipart_reader reader_;
  std::shared_ptr<file_store::writer> file_;
  enum class part { file, field, ignored } current_ = part::ignored;
  std::string field_value_;  // recipient_ref / reply_token: accepted, bounded, not needed by the host
  std::uint64_t body_bytes_ = 0;
  std::optional<http_response> failure_;
};

}  // namespace xconn
