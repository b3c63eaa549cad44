// A Beast body that sends a byte range of a stored file, reading one chunk from the store at a time: a
// download never holds more than one chunk in memory, whatever the file's size.
#pragma once

#include "core/files/file_store.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/optional.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

namespace xconn {

struct file_body {
  struct value_type {
    const file_store* files = nullptr;
    stored_file file;
    std::uint64_t first = 0;   // the first byte to send
    std::uint64_t length = 0;  // how many bytes
  };

  static std::uint64_t size(const value_type& v) { return v.length; }

  class writer {
   public:
    using const_buffers_type = boost::asio::const_buffer;

    template <bool isRequest, class Fields>
    writer(const boost::beast::http::header<isRequest, Fields>&, const value_type& body) : body_(body) {}

    void init(boost::beast::error_code& ec) { ec = {}; }

    boost::optional<std::pair<const_buffers_type, bool>> get(boost::beast::error_code& ec) {
      ec = {};
      if (sent_ == body_.length) return boost::none;
      std::uint64_t at = body_.first + sent_;
      auto piece = body_.files->chunk(body_.file.file_ref, at / file_store::chunk_bytes);
      std::uint64_t within = at % file_store::chunk_bytes;
      if (!piece || within >= piece->size()) {
        // Deleted or expired while being sent: the connection ends short of its Content-Length.
        ec = std::make_error_code(std::errc::no_such_file_or_directory);
        return boost::none;
      }
      chunk_ = std::move(*piece);
      auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_.size() - within, body_.length - sent_));
      sent_ += n;
      return std::make_pair(boost::asio::const_buffer(chunk_.data() + within, n), sent_ < body_.length);
    }

   private:
    const value_type& body_;
    std::string chunk_;  // the chunk being sent: valid until the next get
    std::uint64_t sent_ = 0;
  };
};

using file_response = boost::beast::http::response<file_body>;

}  // namespace xconn
