// A streaming multipart/form-data reader (RFC 7578 on RFC 2046 §5.1) for upload bodies of any size.
//
// Pure state, no I/O: the HTTP layer feeds the body in whatever pieces it arrives in, and the reader hands each
// part's headers and data to callbacks as it goes. Memory stays bounded whatever the input: a part's data is
// never buffered (at most a delimiter's length is held back between feeds), a part's header block is capped by
// limits::max_header_bytes, and so is the preamble before the first delimiter.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace xconn {

// The boundary parameter of a multipart/form-data Content-Type (quoted or not, case-insensitive type and
// parameter name, 1..70 chars per RFC 2046); nullopt when the type is not multipart/form-data or the boundary
// is missing/invalid.
std::optional<std::string> multipart_boundary(std::string_view content_type);

class multipart_reader {
 public:
  struct limits {
    std::size_t max_header_bytes = 8 * 1024;  // the header block of one part (and the preamble)
    std::size_t max_parts = 16;
  };
  struct part_head {
    std::string name;          // Content-Disposition name
    std::string filename;      // filename (filename* = RFC 5987 UTF-8''percent-encoded wins when present); "" when none
    bool has_filename = false;
    std::string content_type;  // the part's Content-Type, "" when absent
  };
  // Return false from a callback to stop reading (feed then returns status::stopped). Empty ones are skipped.
  struct callbacks {
    std::function<bool(const part_head&)> on_part;  // a part's headers are complete
    std::function<bool(std::string_view)> on_data;  // the next piece of the current part's body
    std::function<bool()> on_part_end;              // the current part's body is complete
  };
  enum class status { need_more, done, stopped, error };

  // An invalid boundary (see multipart_boundary) leaves the reader failed: feed and finish return error.
  // Two constructors rather than `limits lim = {}`: GCC cannot use a nested struct's member initializers in a
  // default argument inside the enclosing class.
  multipart_reader(std::string boundary, callbacks cb) : multipart_reader(std::move(boundary), std::move(cb), {}) {}
  multipart_reader(std::string boundary, callbacks cb, limits lim);

  // Consumes the next bytes of the body. After done/stopped/error, further calls return the same status and
  // consume nothing.
  status feed(std::string_view bytes) noexcept;
  // Call when the body has ended: error ("the body ended inside a part" etc.) unless the closing delimiter was
  // seen.
  status finish() noexcept;

  // A short, safe description of what was wrong (never echoes the input bytes), "" when none.
  const std::string& error() const { return error_; }
  // Parts whose headers were accepted (on_part was called for each).
  std::size_t parts() const { return parts_; }

 private:
  enum class state {
    preamble,        // before the first delimiter: bytes are ignored
    delimiter_line,  // after "--boundary": "--", or transport padding then CRLF
    close_dash,      // after "--boundary-": the second '-' of the close delimiter
    delimiter_lf,    // after the CR that ends a delimiter line
    headers,         // a part's header block
    body,            // a part's data
    epilogue,        // after the close delimiter: done, the rest is ignored
    stopped,
    failed,
  };

  void scan(std::string_view& in);
  bool pass(std::string_view data);
  void at_delimiter();
  void read_delimiter_line(std::string_view& in);
  void start_part();
  void read_headers(std::string_view& in);
  void header_line();
  void end_headers();
  void fail(std::string why) noexcept;
  status current() const;

  std::string delimiter_;  // CRLF "--" boundary
  callbacks cb_;
  limits limits_;
  state state_ = state::preamble;
  std::string held_;                 // a proper prefix of delimiter_ seen at the end of the last feed
  std::size_t preamble_budget_ = 0;  // preamble bytes still allowed before the first delimiter
  std::size_t padding_ = 0;          // transport padding on the current delimiter line
  std::size_t header_bytes_ = 0;     // the current header block so far
  std::string line_;                 // the header line being read
  std::optional<std::string> disposition_;
  std::optional<std::string> content_type_;
  part_head head_;
  std::size_t parts_ = 0;
  bool fed_ = false;
  std::string error_;
};

}  // namespace xconn
