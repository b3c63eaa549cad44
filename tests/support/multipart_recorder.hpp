// Reading multipart/form-data bodies in tests: a recorder of the reader's callbacks that checks their order, a
// reading of a body fed in pieces of any size, and bodies built part by part (the upload endpoint's form, data
// that looks like a delimiter without being one).
#pragma once

#include "core/files/multipart_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace xconn::test::multipart {

using status = multipart_reader::status;

inline const std::string boundary = "XconnBoundary7MA4YWxk";
inline const std::string delimiter = "\r\n--" + boundary;

// One part as the callbacks delivered it.
struct recorded_part {
  multipart_reader::part_head head;
  std::string data;
  bool ended = false;
};

// A readable fingerprint of the parts, so two readings compare with a useful failure message.
inline std::string summary(const std::vector<recorded_part>& parts) {
  std::string out;
  for (const auto& p : parts) {
    out += "[name=" + p.head.name + " filename=" + (p.head.has_filename ? p.head.filename : "<none>") +
           " type=" + p.head.content_type + " data=" + p.data + (p.ended ? " end]" : " open]");
  }
  return out;
}

// Records every callback and checks their order: data and end only inside a part.
struct recorder {
  std::vector<recorded_part> parts;
  std::size_t data_calls = 0;
  std::size_t largest_piece = 0;
  std::size_t data_bytes = 0;
  bool stop_on_part = false;
  bool stop_on_data = false;
  bool stop_on_end = false;

  multipart_reader::callbacks callbacks() {
    return {
        .on_part =
            [this](const multipart_reader::part_head& head) {
              EXPECT_TRUE(parts.empty() || parts.back().ended) << "a part began before the last one ended";
              parts.push_back({.head = head, .data = {}, .ended = false});
              return !stop_on_part;
            },
        .on_data =
            [this](std::string_view data) {
              EXPECT_FALSE(data.empty()) << "empty data pieces are noise";
              if (parts.empty() || parts.back().ended) {
                ADD_FAILURE() << "data outside a part";
                return false;
              }
              parts.back().data.append(data);
              ++data_calls;
              data_bytes += data.size();
              largest_piece = std::max(largest_piece, data.size());
              return !stop_on_data;
            },
        .on_part_end =
            [this] {
              if (parts.empty() || parts.back().ended) {
                ADD_FAILURE() << "a part ended twice or before it began";
                return false;
              }
              parts.back().ended = true;
              return !stop_on_end;
            },
    };
  }
};

struct outcome {
  status fed = status::need_more;       // what the last feed returned
  status finished = status::need_more;  // what finish returned
  std::string error;
  std::size_t parts = 0;
  std::vector<recorded_part> recorded;
};

// Feeds the pieces in order (stopping once the reader is no longer asking for more), then finishes.
inline outcome read_pieces(const std::vector<std::string_view>& pieces, multipart_reader::limits lim = {},
                    const std::string& b = boundary) {
  recorder rec;
  multipart_reader reader(b, rec.callbacks(), lim);
  outcome out;
  for (auto piece : pieces) {
    out.fed = reader.feed(piece);
    if (out.fed != status::need_more) break;
  }
  out.finished = reader.finish();
  out.error = reader.error();
  out.parts = reader.parts();
  out.recorded = std::move(rec.parts);
  return out;
}

// The body in pieces of `size` bytes (0: all at once).
inline outcome read_by(std::string_view body, std::size_t size, multipart_reader::limits lim = {}) {
  std::vector<std::string_view> pieces;
  if (size == 0) size = std::max<std::size_t>(body.size(), 1);
  for (std::size_t i = 0; i < body.size(); i += size) pieces.push_back(body.substr(i, size));
  return read_pieces(pieces, lim);
}

inline outcome read_split(std::string_view body, std::size_t at) {
  return read_pieces({body.substr(0, at), body.substr(at)});
}

inline std::string part(std::string_view headers, std::string_view data) {
  return "--" + boundary + "\r\n" + std::string(headers) + "\r\n" + std::string(data) + "\r\n";
}

inline std::string field(std::string_view name, std::string_view data) {
  return part("Content-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n", data);
}

inline std::string close_delimiter() { return "--" + boundary + "--\r\n"; }

// The upload endpoint's form: a file and two fields, the last with a lower-case header name and a token name.
inline std::string upload_form() {
  return part("Content-Disposition: form-data; name=\"file\"; filename=\"report.pdf\"\r\n"
              "Content-Type: application/pdf\r\n",
              "%PDF-1.7\r\n\r\nfake pdf bytes\r\n") +
         field("recipient_ref", "rcpt_42") +
         part("content-disposition: form-data; name=reply_token\r\n", "tok-abc") + close_delimiter();
}

// Data that looks like delimiters without being one.
inline std::string tricky_data() {
  using namespace std::string_literals;  // "..."s keeps NUL bytes in literals
  return "\r\n--" + boundary.substr(0, boundary.size() - 1) + "Q" +  // the delimiter but for its last byte
         "\r\n--Xconn" + "\0\r\n\0"s +                               // a short prefix, then NUL and CRLF
         "--" + boundary + "--" +                                     // the close delimiter without its CRLF
         "\r--" + boundary + "\n--" + boundary +                      // CR alone, LF alone
         "\r\r\r\n\r\n-\r\n--" + "\0\xff\x00"s +                      // runs of CR and LF, binary bytes
         "\r\n--" + boundary.substr(0, 7);                            // a delimiter prefix at the part's end
}

}  // namespace xconn::test::multipart
