#include "core/control/file_upload.hpp"

namespace xconn {
namespace http = boost::beast::http;

namespace {
constexpr std::size_t max_field_bytes = 4096;
}  // namespace

file_upload::file_upload(server_context& ctx, http_request_header header, upload_target target)
    : ctx_(ctx),
      header_(std::move(header)),
      target_(std::move(target)),
      reader_(target_.boundary, {[this](const auto& head) { return on_part(head); },
                                 [this](std::string_view bytes) { return on_data(bytes); },
                                 [this] {
                                   current_ = part::ignored;
                                   return true;
                                 }}) {}

void file_upload::fail(http::status status, std::string code, std::string message) {
  if (!failure_) failure_ = error_response(header_, status, code, message);
  if (file_) file_->abort();
}

bool file_upload::on_part(const multipart_reader::part_head& head) {
  field_value_.clear();
  if (head.name == "file") {
    if (file_) {
      fail(http::status::bad_request, "invalid_multipart", "more than one file part");
      return false;
    }
    file_ = ctx_.files.begin(target_.plugin_id, target_.channel_id, head.filename, head.content_type);
    current_ = part::file;
  } else {
    current_ = head.name == "recipient_ref" || head.name == "reply_token" ? part::field : part::ignored;
  }
  return true;
}

bool file_upload::on_data(std::string_view bytes) {
  if (current_ == part::file) {
    if (file_->append(bytes)) return true;
    if (file_->too_large())
      fail(http::status::payload_too_large, "payload_too_large",
           "over files.max_bytes (" + std::to_string(ctx_.cfg.files.max_bytes) + " bytes)");
    else
      fail(http::status::insufficient_storage, "store_failed", "the file could not be stored");
    return false;
  }
  if (current_ == part::field) {
    if (field_value_.size() + bytes.size() > max_field_bytes) {
      fail(http::status::bad_request, "invalid_multipart", "a form field is over 4096 bytes");
      return false;
    }
    field_value_.append(bytes);
  }
  return true;
}

file_upload::step file_upload::after(multipart_reader::status s) {
  using status = multipart_reader::status;
  if (failure_) return step::failed;
  if (s == status::error) {
    fail(http::status::bad_request, "invalid_multipart", "malformed multipart body: " + reader_.error());
    return step::failed;
  }
  if (s == status::done) {
    if (!file_) {
      fail(http::status::bad_request, "invalid_multipart", "no part named file");
      return step::failed;
    }
    return step::complete;
  }
  return file_ && file_->backlogged() ? step::wait : step::more;
}

file_upload::step file_upload::consume(std::string_view bytes) {
  if (failure_) return step::failed;
  body_bytes_ += bytes.size();
  if (body_bytes_ > ctx_.cfg.files.max_bytes + upload_overhead_bytes) {
    fail(http::status::payload_too_large, "payload_too_large",
         "over files.max_bytes (" + std::to_string(ctx_.cfg.files.max_bytes) + " bytes)");
    return step::failed;
  }
  return after(reader_.feed(bytes));
}

file_upload::step file_upload::end_of_body() {
  if (failure_) return step::failed;
  return after(reader_.finish());
}

void file_upload::when_ready(std::function<void()> resume) { file_->when_drained(std::move(resume)); }

void file_upload::finish(std::function<void(http_response)> answer) {
  file_->finish([this, answer = std::move(answer)](boost::system::result<stored_file, std::string> stored) {
    if (stored) return answer(upload_created(ctx_, header_, *stored));
    answer(error_response(header_, http::status::insufficient_storage, "store_failed", "the file could not be stored"));
  });
}

http_response file_upload::failure() const { return *failure_; }

}  // namespace xconn
