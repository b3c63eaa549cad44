// multipart_reader, the streaming reader of upload bodies (RFC 7578, RFC 2046 §5.1): boundaries, a normal form
// read the same whatever the pieces, delimiters, data, Content-Disposition, and stopping and finishing. Hostile
// input is in multipart_hostile_test.cpp.
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
