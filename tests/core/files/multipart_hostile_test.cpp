// multipart_reader against hostile input: invalid boundaries, bodies without a delimiter, long preambles, huge
// headers, too many parts, bad header lines, truncated bodies; errors never echo the input.
#include "core/files/multipart_reader.hpp"

#include "support/multipart_recorder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {
namespace {

using namespace std::string_literals;  // "..."s keeps NUL bytes in literals
using namespace test::multipart;  // the recorder, the form builders and the sample data

// ---- hostile input -------------------------------------------------------------------------------------------

TEST(MultipartHostile, InvalidBoundaryFailsAtOnce) {
  recorder rec;
  multipart_reader reader("", rec.callbacks());
  EXPECT_EQ(reader.feed(field("a", "1")), status::error);
  EXPECT_EQ(reader.error(), "the multipart boundary is invalid");
  multipart_reader crlf("a\r\nb", rec.callbacks());
  EXPECT_EQ(crlf.finish(), status::error);
  EXPECT_TRUE(rec.parts.empty());
}

TEST(MultipartHostile, BodyWithoutDelimiter) {
  auto r = read_by("just some text, no delimiter at all\r\n--Xconn", 0);
  EXPECT_EQ(r.fed, status::need_more);
  EXPECT_EQ(r.finished, status::error);
  EXPECT_EQ(r.error, "the body has no multipart delimiter");

  auto empty = read_pieces({});
  EXPECT_EQ(empty.finished, status::error);
  EXPECT_EQ(empty.error, "the body is empty");
}

TEST(MultipartHostile, LongPreambleIsRefusedEarly) {
  multipart_reader::limits lim;
  std::string junk(1024 * 1024, 'x');
  multipart_reader reader(boundary, {}, lim);
  std::size_t feeds = 0;
  status s = status::need_more;
  for (std::size_t i = 0; i < junk.size() && s == status::need_more; i += 4096, ++feeds) {
    s = reader.feed(std::string_view(junk).substr(i, 4096));
  }
  EXPECT_EQ(s, status::error);
  EXPECT_EQ(feeds, lim.max_header_bytes / 4096 + 1);  // the first feed past the limit
  // A preamble within the limit is fine.
  auto r = read_by(std::string(lim.max_header_bytes, 'x') + "\r\n" + field("a", "1") + close_delimiter(), 0);
  EXPECT_EQ(r.finished, status::done) << r.error;
  auto over = read_by(std::string(lim.max_header_bytes + 1, 'x') + "\r\n" + field("a", "1"), 0);
  EXPECT_EQ(over.finished, status::error);
}

TEST(MultipartHostile, HugeHeadersAreRefusedEarly) {
  recorder rec;
  multipart_reader reader(boundary, rec.callbacks());
  std::string body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + std::string(1 << 20, 'n');
  std::size_t feeds = 0;
  status s = status::need_more;
  for (std::size_t i = 0; i < body.size() && s == status::need_more; i += 4096, ++feeds) {
    s = reader.feed(std::string_view(body).substr(i, 4096));
  }
  EXPECT_EQ(s, status::error);
  EXPECT_LE(feeds, 3u);
  EXPECT_EQ(reader.error(), "a part's headers exceed 8192 bytes");
  EXPECT_TRUE(rec.parts.empty());
}

TEST(MultipartHostile, HeaderLimitIsExact) {
  // A header block of exactly 100 bytes (its closing empty line included) passes; 101 do not.
  multipart_reader::limits lim{.max_header_bytes = 100};
  auto block = [](std::size_t size) {
    std::string line = "Content-Disposition: form-data; name=a\r\nX-Pad: ";
    return line + std::string(size - line.size() - 4, 'p') + "\r\n\r\n";
  };
  ASSERT_EQ(block(100).size(), 100u);
  auto body = [&](std::size_t size) { return "--" + boundary + "\r\n" + block(size) + "1" + delimiter + "--"; };
  EXPECT_EQ(read_by(body(100), 1, lim).finished, status::done);
  EXPECT_EQ(read_by(body(100), 0, lim).finished, status::done);
  EXPECT_EQ(read_by(body(101), 1, lim).finished, status::error);
  EXPECT_EQ(read_by(body(101), 0, lim).finished, status::error);
}

TEST(MultipartHostile, TooManyParts) {
  std::string sixteen;
  for (int i = 0; i < 16; ++i) sixteen += field("f" + std::to_string(i), "v");
  auto ok = read_by(sixteen + close_delimiter(), 0);
  EXPECT_EQ(ok.finished, status::done);
  EXPECT_EQ(ok.parts, 16u);

  auto r = read_by(sixteen + field("f16", "v") + close_delimiter(), 0);
  EXPECT_EQ(r.finished, status::error);
  EXPECT_EQ(r.error, "more than 16 parts");
  EXPECT_EQ(r.parts, 16u);
  EXPECT_EQ(r.recorded.size(), 16u);
}

TEST(MultipartHostile, BadHeaderLines) {
  struct bad_case {
    std::string headers;
    std::string error;
  };
  const std::vector<bad_case> cases = {
      {"Content-Disposition: form-data; name=a\r\nno colon here\r\n", "a part's header line has no colon"},
      {"Content-Disposition: form-data;\r\n name=a\r\n", "a part's headers use obsolete line folding"},
      {"Content-Disposition: form-data; name=a\r\nX-Nul: a\0b\r\n"s, "a part's header holds a control character"},
      {"Content-Disposition: form-data; name=a\r\nX-Cr: a\rb\r\n", "a part's header holds a control character"},
      {"Content-Disposition: form-data; name=a\nX: b\r\n", "a part's header line does not end in CRLF"},
      {"Content Disposition: form-data; name=a\r\n", "a part's header name is invalid"},
      {": form-data\r\n", "a part's header name is invalid"},
      {"Content-Type: text/plain\r\n", "a part has no Content-Disposition"},
      {"", "a part has no Content-Disposition"},
      {"Content-Disposition: form-data; filename=\"a.txt\"\r\n", "a part's Content-Disposition has no name"},
      {"Content-Disposition: form-data\r\n", "a part's Content-Disposition has no name"},
      {"Content-Disposition: attachment; name=a\r\n", "a part's Content-Disposition is not form-data"},
      {"Content-Disposition: form-data; name=\"a\r\n", "a part's Content-Disposition is malformed"},
      {"Content-Disposition: form-data; name\r\n", "a part's Content-Disposition is malformed"},
      {"Content-Disposition: form-data; name=a; name=b\r\n", "a part's Content-Disposition repeats a parameter"},
      {"Content-Disposition: form-data; name=a\r\nContent-Disposition: form-data; name=b\r\n",
       "a part repeats a header"},
  };
  for (const auto& c : cases) {
    auto r = read_by(part(c.headers, "secret-data") + close_delimiter(), 0);
    EXPECT_EQ(r.finished, status::error) << c.error;
    EXPECT_EQ(r.error, c.error);
    EXPECT_TRUE(r.recorded.empty()) << c.error;
    auto bytewise = read_by(part(c.headers, "secret-data") + close_delimiter(), 1);
    EXPECT_EQ(bytewise.error, c.error);
  }
}

TEST(MultipartHostile, ErrorsDoNotEchoTheInput) {
  auto r = read_by(part("Content-Disposition: form-data; name=a\r\nSECRET-TOKEN-123\r\n", "") + close_delimiter(), 0);
  EXPECT_EQ(r.finished, status::error);
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(r.error.find("SECRET"), std::string::npos);
}

TEST(MultipartHostile, TruncatedBodyFailsAtFinish) {
  const std::string body = upload_form();
  const std::size_t close_end = body.size() - 2;  // the close delimiter ends before its CRLF
  for (std::size_t n = 0; n < body.size(); ++n) {
    auto r = read_by(std::string_view(body).substr(0, n), 0);
    if (n < close_end) {
      EXPECT_EQ(r.finished, status::error) << "cut at " << n;
      EXPECT_FALSE(r.error.empty()) << "cut at " << n;
    } else {
      EXPECT_EQ(r.finished, status::done) << "cut at " << n;
    }
  }
  auto inside = read_by(std::string_view(body).substr(0, body.find("fake pdf")), 0);
  EXPECT_EQ(inside.error, "the body ended inside a part");
  ASSERT_EQ(inside.recorded.size(), 1u);
  EXPECT_FALSE(inside.recorded[0].ended);
  auto in_headers = read_by(std::string_view(body).substr(0, body.find("Content-Type")), 0);
  EXPECT_EQ(in_headers.error, "the body ended inside a part's headers");
}

}  // namespace
}  // namespace xconn
