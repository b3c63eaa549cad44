#include "core/files/multipart_reader.hpp"

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

using status = multipart_reader::status;
using namespace std::string_literals;  // "..."s keeps NUL bytes in literals

const std::string boundary = "XconnBoundary7MA4YWxk";
const std::string delimiter = "\r\n--" + boundary;

// One part as the callbacks delivered it.
struct recorded_part {
  multipart_reader::part_head head;
  std::string data;
  bool ended = false;
};

// A readable fingerprint of the parts, so two readings compare with a useful failure message.
std::string summary(const std::vector<recorded_part>& parts) {
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
outcome read_pieces(const std::vector<std::string_view>& pieces, multipart_reader::limits lim = {},
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
outcome read_by(std::string_view body, std::size_t size, multipart_reader::limits lim = {}) {
  std::vector<std::string_view> pieces;
  if (size == 0) size = std::max<std::size_t>(body.size(), 1);
  for (std::size_t i = 0; i < body.size(); i += size) pieces.push_back(body.substr(i, size));
  return read_pieces(pieces, lim);
}

outcome read_split(std::string_view body, std::size_t at) {
  return read_pieces({body.substr(0, at), body.substr(at)});
}

std::string part(std::string_view headers, std::string_view data) {
  return "--" + boundary + "\r\n" + std::string(headers) + "\r\n" + std::string(data) + "\r\n";
}

std::string field(std::string_view name, std::string_view data) {
  return part("Content-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n", data);
}

std::string close_delimiter() { return "--" + boundary + "--\r\n"; }

// The upload endpoint's form: a file and two fields, the last with a lower-case header name and a token name.
std::string upload_form() {
  return part("Content-Disposition: form-data; name=\"file\"; filename=\"report.pdf\"\r\n"
              "Content-Type: application/pdf\r\n",
              "%PDF-1.7\r\n\r\nfake pdf bytes\r\n") +
         field("recipient_ref", "rcpt_42") +
         part("content-disposition: form-data; name=reply_token\r\n", "tok-abc") + close_delimiter();
}

// Data that looks like delimiters without being one.
std::string tricky_data() {
  return "\r\n--" + boundary.substr(0, boundary.size() - 1) + "Q" +  // the delimiter but for its last byte
         "\r\n--Xconn" + "\0\r\n\0"s +                               // a short prefix, then NUL and CRLF
         "--" + boundary + "--" +                                     // the close delimiter without its CRLF
         "\r--" + boundary + "\n--" + boundary +                      // CR alone, LF alone
         "\r\r\r\n\r\n-\r\n--" + "\0\xff\x00"s +                      // runs of CR and LF, binary bytes
         "\r\n--" + boundary.substr(0, 7);                            // a delimiter prefix at the part's end
}

// ---- multipart_boundary --------------------------------------------------------------------------------------

TEST(MultipartBoundary, UnquotedAndQuoted) {
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=abc123"), "abc123");
  EXPECT_EQ(multipart_boundary("multipart/form-data;boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW"),
            "----WebKitFormBoundary7MA4YWxkTrZu0gW");
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"a b'()+_,-./:=?\""), "a b'()+_,-./:=?");
  EXPECT_EQ(multipart_boundary("multipart/form-data; charset=utf-8; boundary=\"xyz\" ; x=y"), "xyz");
  EXPECT_EQ(multipart_boundary("  multipart/form-data  ;  boundary=xyz  "), "xyz");
}

TEST(MultipartBoundary, TypeAndParameterNameIgnoreCaseButTheValueKeepsIt) {
  EXPECT_EQ(multipart_boundary("Multipart/Form-Data; BOUNDARY=AbC"), "AbC");
  EXPECT_EQ(multipart_boundary("MULTIPART/FORM-DATA; Boundary=\"AbC\""), "AbC");
}

TEST(MultipartBoundary, MissingOrEmpty) {
  EXPECT_EQ(multipart_boundary("multipart/form-data"), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-data; charset=utf-8"), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary="), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"\""), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundaryx=abc"), std::nullopt);
  EXPECT_EQ(multipart_boundary(""), std::nullopt);
}

TEST(MultipartBoundary, LengthIsOneToSeventy) {
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=a"), "a");
  std::string b70(70, 'b');
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=" + b70), b70);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=" + b70 + "b"), std::nullopt);
}

TEST(MultipartBoundary, InvalidCharactersOrSyntax) {
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"abc \""), std::nullopt);  // ends in a space
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"a\\\"b\""), std::nullopt);  // a quote
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"a\rb\""), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=ab*c"), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"abc"), std::nullopt);  // unterminated
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=abc def"), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=a; boundary=b"), std::nullopt);  // ambiguous
}

TEST(MultipartBoundary, OtherTypesHaveNone) {
  EXPECT_EQ(multipart_boundary("text/plain; boundary=abc"), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/mixed; boundary=abc"), std::nullopt);
  EXPECT_EQ(multipart_boundary("multipart/form-datax; boundary=abc"), std::nullopt);
  EXPECT_EQ(multipart_boundary("application/x-www-form-urlencoded"), std::nullopt);
}

// ---- a normal form -------------------------------------------------------------------------------------------

TEST(MultipartReader, ReadsTheUploadForm) {
  auto r = read_by(upload_form(), 0);
  EXPECT_EQ(r.fed, status::done);
  EXPECT_EQ(r.finished, status::done);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.parts, 3u);
  ASSERT_EQ(r.recorded.size(), 3u);

  const auto& file = r.recorded[0];
  EXPECT_EQ(file.head.name, "file");
  EXPECT_TRUE(file.head.has_filename);
  EXPECT_EQ(file.head.filename, "report.pdf");
  EXPECT_EQ(file.head.content_type, "application/pdf");
  EXPECT_EQ(file.data, "%PDF-1.7\r\n\r\nfake pdf bytes\r\n");
  EXPECT_TRUE(file.ended);

  const auto& recipient = r.recorded[1];
  EXPECT_EQ(recipient.head.name, "recipient_ref");
  EXPECT_FALSE(recipient.head.has_filename);
  EXPECT_EQ(recipient.head.filename, "");
  EXPECT_EQ(recipient.head.content_type, "");
  EXPECT_EQ(recipient.data, "rcpt_42");
  EXPECT_TRUE(recipient.ended);

  const auto& token = r.recorded[2];
  EXPECT_EQ(token.head.name, "reply_token");
  EXPECT_EQ(token.data, "tok-abc");
  EXPECT_TRUE(token.ended);
}

TEST(MultipartReader, EverySplitPointGivesTheSameParts) {
  const std::string body = upload_form();
  const std::string expected = summary(read_by(body, 0).recorded);
  ASSERT_NE(expected.find("tok-abc end]"), std::string::npos);
  for (std::size_t at = 0; at <= body.size(); ++at) {
    auto r = read_split(body, at);
    EXPECT_EQ(r.finished, status::done) << "split at " << at << ": " << r.error;
    EXPECT_EQ(summary(r.recorded), expected) << "split at " << at;
  }
}

TEST(MultipartReader, ByteByByteGivesTheSameParts) {
  const std::string body = upload_form();
  auto whole = read_by(body, 0);
  auto bytewise = read_by(body, 1);
  EXPECT_EQ(bytewise.fed, status::done);
  EXPECT_EQ(bytewise.finished, status::done);
  EXPECT_EQ(bytewise.parts, 3u);
  EXPECT_EQ(summary(bytewise.recorded), summary(whole.recorded));
}

TEST(MultipartReader, RandomPiecesGiveTheSameParts) {
  const std::string body = field("a", tricky_data()) + upload_form();
  const std::string expected = summary(read_by(body, 0).recorded);
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string_view> pieces;
    for (std::size_t i = 0; i < body.size();) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
      pieces.push_back(std::string_view(body).substr(i, n));
      i += n;
    }
    auto r = read_pieces(pieces);
    ASSERT_EQ(r.finished, status::done) << "round " << round << ": " << r.error;
    ASSERT_EQ(summary(r.recorded), expected) << "round " << round;
  }
}

TEST(MultipartReader, EmptyCallbacksAreSkipped) {
  multipart_reader reader(boundary, {});
  EXPECT_EQ(reader.feed(upload_form()), status::done);
  EXPECT_EQ(reader.finish(), status::done);
  EXPECT_EQ(reader.parts(), 3u);
}

// ---- delimiters ----------------------------------------------------------------------------------------------

TEST(MultipartReader, PreambleAndEpilogueAreIgnored) {
  std::string body = "This is the preamble.\r\n--not-it\r\n" + field("a", "1") + "--" + boundary +
                     "--\r\nthe epilogue\r\n" + field("b", "2") + close_delimiter();
  auto r = read_by(body, 0);
  EXPECT_EQ(r.finished, status::done);
  EXPECT_EQ(summary(r.recorded), "[name=a filename=<none> type= data=1 end]");
}

TEST(MultipartReader, FirstDelimiterMayFollowACrlf) {
  auto r = read_by("\r\n" + field("a", "1") + close_delimiter(), 0);
  EXPECT_EQ(r.finished, status::done);
  EXPECT_EQ(summary(r.recorded), "[name=a filename=<none> type= data=1 end]");
}

TEST(MultipartReader, FirstDelimiterNeedsALineStart) {
  // "x--boundary" is preamble, not a delimiter: no part ever starts.
  auto r = read_by("x" + field("a", "1"), 0);
  EXPECT_EQ(r.finished, status::error);
  EXPECT_TRUE(r.recorded.empty());
}

TEST(MultipartReader, TransportPaddingAfterDelimiters) {
  std::string body = "--" + boundary + " \t \r\nContent-Disposition: form-data; name=a\r\n\r\n1" + delimiter +
                     "\t\r\nContent-Disposition: form-data; name=b\r\n\r\n2" + delimiter + "--  \r\n";
  auto r = read_by(body, 1);
  EXPECT_EQ(r.finished, status::done) << r.error;
  EXPECT_EQ(summary(r.recorded), "[name=a filename=<none> type= data=1 end][name=b filename=<none> type= data=2 end]");
}

TEST(MultipartReader, EmptyPartAndEmptyForm) {
  auto r = read_by(field("a", "") + close_delimiter(), 1);
  EXPECT_EQ(r.finished, status::done);
  EXPECT_EQ(summary(r.recorded), "[name=a filename=<none> type= data= end]");

  // A form without fields: browsers send only the close delimiter.
  auto empty = read_by(close_delimiter(), 0);
  EXPECT_EQ(empty.finished, status::done);
  EXPECT_EQ(empty.parts, 0u);
}

TEST(MultipartReader, DelimiterFollowedByOtherBytesIsAnError) {
  // The boundary must not occur inside a part, so "--boundaryX" is neither data nor a delimiter.
  auto r = read_by(field("a", "1") + "--" + boundary + "X\r\n", 0);
  EXPECT_EQ(r.finished, status::error);
  EXPECT_EQ(r.error, "a multipart delimiter is followed by other bytes");
  auto dash = read_by(field("a", "1") + "--" + boundary + "-X\r\n", 0);
  EXPECT_EQ(dash.finished, status::error);
  auto bare_lf = read_by(field("a", "1") + "--" + boundary + "\n", 0);
  EXPECT_EQ(bare_lf.finished, status::error);
}

// ---- data ----------------------------------------------------------------------------------------------------

TEST(MultipartReader, BinaryDataWithDelimiterLookAlikes) {
  const std::string data = tricky_data();
  const std::string body = part("Content-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\n"
                                "Content-Type: application/octet-stream\r\n",
                                data) +
                           close_delimiter();
  for (std::size_t size : {0, 1, 2, 3, 5, 7, 11, 13}) {
    auto r = read_by(body, size);
    EXPECT_EQ(r.finished, status::done) << "pieces of " << size << ": " << r.error;
    ASSERT_EQ(r.recorded.size(), 1u) << "pieces of " << size;
    EXPECT_EQ(r.recorded[0].data, data) << "pieces of " << size;
  }
  for (std::size_t at = 0; at <= body.size(); ++at) {
    auto r = read_split(body, at);
    ASSERT_EQ(r.recorded.size(), 1u) << "split at " << at;
    EXPECT_EQ(r.recorded[0].data, data) << "split at " << at;
    EXPECT_EQ(r.finished, status::done) << "split at " << at;
  }
}

TEST(MultipartReader, DelimiterPrefixAtAFeedEnd) {
  const std::string head = "--" + boundary + "\r\nContent-Disposition: form-data; name=a\r\n\r\nabc";
  const std::string prefix = "\r\n--" + boundary.substr(0, 9);

  // The prefix turns out to be a delimiter.
  {
    recorder rec;
    multipart_reader reader(boundary, rec.callbacks());
    EXPECT_EQ(reader.feed(head + prefix), status::need_more);
    ASSERT_EQ(rec.parts.size(), 1u);
    EXPECT_EQ(rec.parts[0].data, "abc");  // the prefix is held back, not delivered
    EXPECT_EQ(reader.feed(boundary.substr(9) + "--\r\n"), status::done);
    EXPECT_EQ(rec.parts[0].data, "abc");
    EXPECT_TRUE(rec.parts[0].ended);
  }
  // The prefix turns out to be data, including when the next feed starts another delimiter.
  {
    recorder rec;
    multipart_reader reader(boundary, rec.callbacks());
    EXPECT_EQ(reader.feed(head + prefix), status::need_more);
    EXPECT_EQ(reader.feed("nce"), status::need_more);
    EXPECT_EQ(reader.feed(prefix), status::need_more);
    EXPECT_EQ(reader.feed(delimiter), status::need_more);
    EXPECT_EQ(reader.feed("--"), status::done);
    EXPECT_EQ(reader.finish(), status::done);
    ASSERT_EQ(rec.parts.size(), 1u);
    EXPECT_EQ(rec.parts[0].data, "abc" + prefix + "nce" + prefix);
  }
}

TEST(MultipartReader, HoldsBackAtMostADelimiter) {
  const std::string head = "--" + boundary + "\r\nContent-Disposition: form-data; name=a\r\n\r\n";
  const std::string data = std::string(500, 'x') + "\r\n-" + std::string(500, 'y');
  const std::string body = head + data + "\r\n" + close_delimiter();
  recorder rec;
  multipart_reader reader(boundary, rec.callbacks());
  for (std::size_t i = 0; i < body.size(); i += 7) {
    ASSERT_NE(reader.feed(std::string_view(body).substr(i, 7)), status::error) << reader.error();
    std::size_t fed_data = std::min(i + 7, head.size() + data.size());
    if (fed_data <= head.size()) continue;
    fed_data -= head.size();
    EXPECT_LE(fed_data - rec.data_bytes, delimiter.size() - 1) << "after " << i + 7 << " bytes";
  }
  EXPECT_EQ(reader.finish(), status::done);
  ASSERT_EQ(rec.parts.size(), 1u);
  EXPECT_EQ(rec.parts[0].data, data);
}

TEST(MultipartReader, LargeDataComesOutInLargePieces) {
  std::string data(3 * 1024 * 1024, '\0');
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> byte(0, 255);
  std::generate(data.begin(), data.end(), [&] { return static_cast<char>(byte(rng)); });
  const std::string body =
      part("Content-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n", data) + close_delimiter();

  recorder rec;
  multipart_reader reader(boundary, rec.callbacks());
  constexpr std::size_t piece = 64 * 1024;
  std::size_t feeds = 0;
  status last = status::need_more;
  for (std::size_t i = 0; i < body.size(); i += piece, ++feeds) last = reader.feed(std::string_view(body).substr(i, piece));
  EXPECT_EQ(last, status::done);
  EXPECT_EQ(reader.finish(), status::done);
  ASSERT_EQ(rec.parts.size(), 1u);
  EXPECT_TRUE(rec.parts[0].data == data) << "the data did not reassemble";
  // At most a held-back piece and the rest per feed, and most pieces are nearly a feed long.
  EXPECT_LE(rec.data_calls, 2 * feeds);
  EXPECT_GE(rec.largest_piece, piece - delimiter.size());
  EXPECT_GE(rec.data_bytes / rec.data_calls, piece / 2);
}

// ---- Content-Disposition ---------------------------------------------------------------------------------------

TEST(MultipartReader, FilenameStarWins) {
  auto r = read_by(part("Content-Disposition: form-data; name=\"file\"; filename=\"rates.txt\"; "
                        "filename*=UTF-8''%E2%82%AC%20rates.txt\r\n",
                        "x") +
                       part("Content-Disposition: form-data; filename*=utf-8'en'na%C3%AFve.txt; name=f2; "
                            "filename=\"naive.txt\"\r\n",
                            "y") +
                       part("Content-Disposition: form-data; name=f3; filename*=\"UTF-8''only.txt\"\r\n", "z") +
                       close_delimiter(),
                   0);
  EXPECT_EQ(r.finished, status::done) << r.error;
  ASSERT_EQ(r.recorded.size(), 3u);
  EXPECT_EQ(r.recorded[0].head.filename, "\xE2\x82\xAC rates.txt");
  EXPECT_EQ(r.recorded[1].head.filename, "na\xC3\xAFve.txt");
  EXPECT_EQ(r.recorded[1].head.name, "f2");
  EXPECT_EQ(r.recorded[2].head.filename, "only.txt");
  EXPECT_TRUE(r.recorded[2].head.has_filename);
}

TEST(MultipartReader, MalformedFilenameStarIsAnError) {
  for (std::string bad : {"UTF-8''%E2%8", "UTF-8''%G1", "UTF-8''a%00b", "ISO-8859-1''caf%E9", "nocharset"}) {
    auto r = read_by(part("Content-Disposition: form-data; name=f; filename*=" + bad + "\r\n", "x") +
                         close_delimiter(),
                     0);
    EXPECT_EQ(r.finished, status::error) << bad;
    EXPECT_TRUE(r.recorded.empty()) << bad;
  }
}

TEST(MultipartReader, FilenameIsReturnedAsSent) {
  auto r = read_by(part("Content-Disposition: form-data; name=a; filename=\"../../etc/passwd\"\r\n", "1") +
                       part("Content-Disposition: form-data; name=b; filename=\"C:\\Users\\me\\report.pdf\"\r\n",
                            "2") +
                       part("Content-Disposition: form-data; name=c; filename=\"\"\r\n", "") + close_delimiter(),
                   0);
  EXPECT_EQ(r.finished, status::done) << r.error;
  ASSERT_EQ(r.recorded.size(), 3u);
  EXPECT_EQ(r.recorded[0].head.filename, "../../etc/passwd");
  EXPECT_EQ(r.recorded[1].head.filename, "C:\\Users\\me\\report.pdf");  // bare backslashes are kept
  EXPECT_TRUE(r.recorded[2].head.has_filename);  // what a browser sends for an empty file input
  EXPECT_EQ(r.recorded[2].head.filename, "");
}

TEST(MultipartReader, QuotedStringEscapesAndParameterCase) {
  auto r = read_by(part("Content-Disposition: Form-Data; NAME=\"say \\\"hi\\\"; now\"; FileName=\"a\\\\b\"\r\n"
                        "CONTENT-TYPE:text/plain; charset=utf-8 \r\n"
                        "X-Other: ignored\r\n",
                        "1") +
                       close_delimiter(),
                   0);
  EXPECT_EQ(r.finished, status::done) << r.error;
  ASSERT_EQ(r.recorded.size(), 1u);
  EXPECT_EQ(r.recorded[0].head.name, "say \"hi\"; now");
  EXPECT_EQ(r.recorded[0].head.filename, "a\\b");
  EXPECT_EQ(r.recorded[0].head.content_type, "text/plain; charset=utf-8");
}

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

// ---- stopping and finishing ----------------------------------------------------------------------------------

TEST(MultipartReader, CallbackReturningFalseStops) {
  const std::string body = upload_form();
  for (int which = 0; which < 3; ++which) {
    recorder rec;
    rec.stop_on_part = which == 0;
    rec.stop_on_data = which == 1;
    rec.stop_on_end = which == 2;
    multipart_reader reader(boundary, rec.callbacks());
    EXPECT_EQ(reader.feed(body), status::stopped) << which;
    EXPECT_EQ(rec.parts.size(), 1u) << which;  // nothing after the refusal
    EXPECT_EQ(reader.feed(body), status::stopped) << which;
    EXPECT_EQ(reader.finish(), status::stopped) << which;
    EXPECT_EQ(rec.parts.size(), 1u) << which;
    EXPECT_EQ(reader.error(), "") << which;
  }
}

TEST(MultipartReader, FeedAfterDoneConsumesNothing) {
  recorder rec;
  multipart_reader reader(boundary, rec.callbacks());
  EXPECT_EQ(reader.feed(field("a", "1") + close_delimiter()), status::done);
  EXPECT_EQ(reader.feed(field("b", "2") + close_delimiter()), status::done);
  EXPECT_EQ(reader.feed("garbage"), status::done);
  EXPECT_EQ(reader.finish(), status::done);
  EXPECT_EQ(reader.finish(), status::done);
  EXPECT_EQ(reader.parts(), 1u);
  EXPECT_EQ(summary(rec.parts), "[name=a filename=<none> type= data=1 end]");
}

TEST(MultipartReader, FeedAfterErrorKeepsTheError) {
  recorder rec;
  multipart_reader reader(boundary, rec.callbacks());
  EXPECT_EQ(reader.feed(part("no colon\r\n", "")), status::error);
  std::string first = reader.error();
  EXPECT_EQ(reader.feed(field("a", "1") + close_delimiter()), status::error);
  EXPECT_EQ(reader.finish(), status::error);
  EXPECT_EQ(reader.error(), first);
  EXPECT_TRUE(rec.parts.empty());
}

TEST(MultipartReader, ThrowingCallbackBecomesAnError) {
  multipart_reader::callbacks cb;
  cb.on_data = [](std::string_view) -> bool { throw std::runtime_error("boom"); };
  multipart_reader reader(boundary, cb);
  EXPECT_EQ(reader.feed(upload_form()), status::error);
  EXPECT_FALSE(reader.error().empty());
  EXPECT_EQ(reader.error().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace xconn
