// The streaming multipart/form-data reader (core/files/multipart_reader.cpp) and the boundary parameter reader.
// Input: a Content-Type line, "\n", then the upload body. Checked beyond not crashing: a boundary read from a
// Content-Type is 1..70 characters; the callbacks come in order (data and end only inside a part, at most
// max_parts parts, no empty data piece); memory stays bounded (no part head field longer than the header cap);
// and the body read in one piece and in pieces cut where the input says gives the same parts, status and error.
#include "core/files/multipart_reader.hpp"
#include "fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace xconn;
using status = multipart_reader::status;

struct part {
  multipart_reader::part_head head;
  std::string data;
  bool ended = false;
  bool operator==(const part& o) const {
    return head.name == o.head.name && head.filename == o.head.filename && head.has_filename == o.head.has_filename &&
           head.content_type == o.head.content_type && data == o.data && ended == o.ended;
  }
};

struct reading {
  std::vector<part> parts;
  status fed = status::need_more, finished = status::need_more;
  std::string error;
  std::size_t count = 0;
  bool operator==(const reading&) const = default;
};

constexpr multipart_reader::limits limits{.max_header_bytes = 1024, .max_parts = 8};

// Feeds the pieces until the reader stops asking, then finishes; the callbacks are checked as they come.
reading read(const std::string& boundary, const std::vector<std::string_view>& pieces) {
  reading out;
  multipart_reader::callbacks cb{
      .on_part =
          [&](const multipart_reader::part_head& head) {
            FUZZ_CHECK(out.parts.empty() || out.parts.back().ended);
            FUZZ_CHECK(out.parts.size() < limits.max_parts);
            FUZZ_CHECK(head.name.size() <= limits.max_header_bytes && head.filename.size() <= limits.max_header_bytes &&
                       head.content_type.size() <= limits.max_header_bytes);
            out.parts.push_back({head, {}, false});
            return true;
          },
      .on_data =
          [&](std::string_view data) {
            FUZZ_CHECK(!data.empty());
            FUZZ_CHECK(!out.parts.empty() && !out.parts.back().ended);
            out.parts.back().data.append(data);
            return true;
          },
      .on_part_end =
          [&] {
            FUZZ_CHECK(!out.parts.empty() && !out.parts.back().ended);
            out.parts.back().ended = true;
            return true;
          },
  };
  multipart_reader reader(boundary, std::move(cb), limits);
  for (auto piece : pieces) {
    out.fed = reader.feed(piece);
    if (out.fed != status::need_more) break;
  }
  out.finished = reader.finish();
  out.error = reader.error();
  out.count = reader.parts();
  FUZZ_CHECK(out.count == out.parts.size());
  FUZZ_CHECK((out.finished == status::error) == !out.error.empty());
  if (out.finished == status::done) {
    for (const auto& p : out.parts) FUZZ_CHECK(p.ended);
  }
  // Once finished, the reader stays where it is.
  FUZZ_CHECK(reader.feed("--") == out.finished && reader.finish() == out.finished);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  const std::string_view content_type = input.substr(0, newline);
  const std::string_view body = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);

  auto parsed = multipart_boundary(content_type);
  if (parsed) FUZZ_CHECK(!parsed->empty() && parsed->size() <= 70);
  // Without a usable Content-Type the body is still read, with the tests' boundary.
  const std::string boundary = parsed ? *parsed : std::string("XconnBoundary7MA4YWxk");

  const reading whole = read(boundary, {body});
  // The same body cut into pieces of 1..16 bytes, the sizes taken from the body's own bytes.
  std::vector<std::string_view> pieces;
  for (std::size_t at = 0; at < body.size();) {
    std::size_t n = 1 + static_cast<unsigned char>(body[at]) % 16;
    pieces.push_back(body.substr(at, n));
    at += n;
  }
  FUZZ_CHECK(read(boundary, pieces) == whole);
  return 0;
}
