#include "load_transfer.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <array>
#include <optional>

namespace xconn::load {
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::string_view boundary = "xconn-load-boundary-7f3a9c";

// multipart/form-data with one part, "file", of n bytes.
std::string multipart_body(std::uint64_t n) {
  std::string body;
  body.reserve(n + 256);
  body += "--";
  body += boundary;
  body += "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"load.bin\"\r\n"
          "Content-Type: application/octet-stream\r\n\r\n";
  body.append(n, 'x');
  body += "\r\n--";
  body += boundary;
  body += "--\r\n";
  return body;
}

}  // namespace

struct transfer_client::connection {
  // Room for 64 KiB from the start: Beast reads as much as the buffer's free capacity (512 bytes at least), so an
  // empty buffer would read a download in small pieces.
  explicit connection(boost::asio::io_context& io) : stream(io) { buffer.reserve(64 * 1024); }
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  http::request<http::string_body> upload;
  http::request<http::empty_body> download;
  std::optional<http::response_parser<http::string_body>> answer;
  std::optional<http::response_parser<http::buffer_body>> body;
  std::array<char, 64 * 1024> scratch;  // where a download's bytes land, each overwriting the last
};

transfer_client::transfer_client(boost::asio::io_context& io, run_state& run,
                                 const boost::asio::ip::tcp::endpoint& endpoint, std::string channel_id)
    : io_(std::make_unique<connection>(io)), run_(run), endpoint_(endpoint), channel_id_(std::move(channel_id)) {}

transfer_client::~transfer_client() = default;

void transfer_client::set_up(std::function<void(std::string)> done) {
  const auto& o = run_.opts;
  const std::string host = endpoint_.address().to_string() + ":" + std::to_string(endpoint_.port());
  auto& up = io_->upload;
  up = {http::verb::post, "/connectors/" + o.plugin + "/files/uploads", 11};
  up.set(http::field::host, host);
  up.set(http::field::content_type, "multipart/form-data; boundary=" + std::string(boundary));
  if (!o.key.empty()) up.set(http::field::authorization, "Bearer " + o.key);
  up.set("X-XAgent-Connector-Channel-ID", channel_id_);
  up.keep_alive(true);
  if (o.what == scenario::upload || o.target == target_kind::xconnd) {
    up.body() = multipart_body(o.file_bytes);
    up.prepare_payload();
  }
  io_->download = {http::verb::get, "/bytes/" + std::to_string(o.file_bytes), 11};
  io_->download.set(http::field::host, host);
  io_->download.keep_alive(true);

  io_->stream.expires_after(std::chrono::seconds(10));
  io_->stream.async_connect(endpoint_, [self = shared_from_this(), done = std::move(done)](beast::error_code ec) mutable {
    if (ec) return done("cannot connect for transfers: " + ec.message());
    // No deadline per read: re-arming a timer for every 64 KiB cost the client more than the bytes did. The run's
    // end closes the connection whatever is in flight.
    self->io_->stream.expires_never();
    self->io_->stream.socket().set_option(boost::asio::ip::tcp::no_delay(true));
    if (self->run_.opts.what == scenario::upload || self->run_.opts.target == target_kind::ceiling) return done("");
    // A download needs a file: upload one now, fetch it for the whole run.
    self->set_up_done_ = std::move(done);
    self->send_upload();
  });
}

void transfer_client::start() { send_next(); }

void transfer_client::send_next() {
  if (finished_ || !run_.reserve(1)) return;
  busy_ = true;
  run_.in_flight.fetch_add(1, std::memory_order_relaxed);
  sent_ = clock::now();
  if (run_.opts.what == scenario::upload) return send_upload();
  send_download();
}

void transfer_client::send_upload() {
  ++totals_.frames_sent;
  http::async_write(io_->stream, io_->upload, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->fail_connection("upload write", ec);
    self->read_upload_answer();
  });
}

void transfer_client::read_upload_answer() {
  io_->answer.emplace();
  io_->answer->body_limit(64 * 1024);
  http::async_read(io_->stream, io_->buffer, *io_->answer, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->fail_connection("upload answer", ec);
    ++self->totals_.frames_received;
    const auto& answer = self->io_->answer->get();
    const bool created = answer.result() == http::status::created;
    if (auto done = std::exchange(self->set_up_done_, nullptr)) {
      boost::system::error_code parse_error;
      auto value = boost::json::parse(answer.body(), parse_error);
      const auto* ref = !parse_error && value.is_object() ? value.as_object().if_contains("file_ref") : nullptr;
      if (!created || !ref || !ref->is_string())
        return done("the set-up upload answered " + std::to_string(answer.result_int()));
      self->file_ref_ = std::string(ref->as_string());
      auto& get = self->io_->download;
      get.target("/connectors/" + self->run_.opts.plugin + "/files/refs/" + self->file_ref_);
      get.set(http::field::authorization, "Bearer " + self->run_.opts.key);
      get.set("X-XAgent-Connector-Channel-ID", self->channel_id_);
      self->io_->upload.body().clear();  // not sent again
      return done("");
    }
    self->end_request(created ? "" : "http " + std::to_string(answer.result_int()));
  });
}

void transfer_client::send_download() {
  ++totals_.frames_sent;
  http::async_write(io_->stream, io_->download, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->fail_connection("download write", ec);
    self->received_ = 0;
    self->io_->body.emplace();
    self->io_->body->body_limit(boost::none);
    self->read_download_body();
  });
}

// Beast's buffer_body: each read fills the scratch buffer, need_buffer says it is full (not an error).
void transfer_client::read_download_body() {
  auto& body = io_->body->get().body();
  body.data = io_->scratch.data();
  body.size = io_->scratch.size();
  http::async_read(io_->stream, io_->buffer, *io_->body, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return self->fail_connection("download", ec);
    auto& parser = *self->io_->body;
    self->received_ += self->io_->scratch.size() - parser.get().body().size;
    if (!parser.is_done()) return self->read_download_body();
    ++self->totals_.frames_received;
    if (parser.get().result() != http::status::ok) return self->end_request("http " + std::to_string(parser.get().result_int()));
    self->end_request(self->received_ == self->run_.opts.file_bytes ? "" : "short body");
  });
}

void transfer_client::end_request(std::string error_code) {
  busy_ = false;
  run_.in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (error_code.empty()) {
    ++totals_.operations;
    run_.completed.fetch_add(1, std::memory_order_relaxed);
    totals_.latency.add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - sent_).count()));
  } else {
    ++totals_.errors;
    ++totals_.error_codes[error_code];
    run_.errors.fetch_add(1, std::memory_order_relaxed);
  }
  send_next();
}

void transfer_client::fail_connection(const std::string& what, boost::system::error_code ec) {
  if (finished_) return;
  if (auto done = std::exchange(set_up_done_, nullptr)) return done("the set-up upload failed: " + ec.message());
  if (busy_) {
    busy_ = false;
    run_.in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
  ++totals_.errors;
  ++totals_.error_codes[what + ": " + ec.message()];
  run_.errors.fetch_add(1, std::memory_order_relaxed);
  finished_ = true;  // the connection is gone: this client is done
  beast::error_code ignored;
  io_->stream.socket().close(ignored);
}

void transfer_client::finish() {
  if (finished_) return;
  finished_ = true;
  if (busy_) ++totals_.unanswered;
  beast::error_code ignored;
  io_->stream.socket().close(ignored);
}

}  // namespace xconn::load
