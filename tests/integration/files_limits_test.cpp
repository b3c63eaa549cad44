// files.max_bytes on the real server: a Content-Length past the allowance is refused before any body byte, a file
// of exactly max_bytes is accepted, one byte over is 413, and a chunked upload is streamed and cut off at the limit
// (docs/protocol.md "Files").
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr std::uint64_t small_max = 1024 * 1024;  // files.max_bytes of FilesSmall
constexpr std::uint64_t header_allowance = 65536;  // what a Content-Length may exceed files.max_bytes by

class FilesSmall : public Files {
 protected:
  FilesSmall() : Files([](config& c) { c.files.max_bytes = small_max; }) {}
};

TEST_F(FilesSmall, a_content_length_over_the_allowance_is_413_before_any_body_byte) {
  auto c = raw_http::connect(server.port());
  ASSERT_TRUE(c);
  auto h = key_and(channel);
  h["Content-Type"] = multipart_type();
  h["Content-Length"] = std::to_string(small_max + header_allowance + 1);
  ASSERT_TRUE(c->send(request_head("POST", uploads, h)));
  auto r = c->read_response(5s);  // no body byte is ever sent
  ASSERT_TRUE(r) << "no answer before the body: the limit was not decided from Content-Length";
  EXPECT_EQ(r->status, 413) << r->head;
  EXPECT_EQ(r->error_code(), "payload_too_large") << r->body;

  // With Expect: 100-continue the answer is the 413, not a 100.
  auto c2 = raw_http::connect(server.port());
  ASSERT_TRUE(c2);
  h["Expect"] = "100-continue";
  h["Content-Length"] = std::to_string(50ull * 1024 * 1024);
  ASSERT_TRUE(c2->send(request_head("POST", uploads, h)));
  auto r2 = c2->read_response(5s);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 413) << r2->head;
  EXPECT_EQ(r2->error_code(), "payload_too_large") << r2->body;

  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("still fine").empty());
}

TEST_F(FilesSmall, a_file_of_exactly_max_bytes_is_accepted) {
  auto data = random_bytes(small_max);
  auto o = upload_ok(data, "exact.bin");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(small_max));
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, data);
}

TEST_F(FilesSmall, a_file_one_byte_over_max_within_the_content_length_allowance_is_413) {
  byte_source src(7);
  auto s = stream_upload(server.port(), key_and(channel), "over.bin", small_max + 1, false,
                         [&](char* p, std::size_t n) { src.fill(p, n); });
  ASSERT_TRUE(s.response) << "no answer";
  EXPECT_EQ(s.response->status, 413) << s.response->head << s.response->body;
  EXPECT_EQ(s.response->error_code(), "payload_too_large") << s.response->body;
  EXPECT_FALSE(s.response->json().is_object() && s.response->json().as_object().contains("file_ref"));
  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("after the 413").empty());
}

TEST_F(FilesSmall, a_chunked_upload_is_streamed_and_over_max_is_413) {
  // Under the limit, chunked coding (no Content-Length) is an ordinary upload.
  byte_source a(11), a_copy(11);
  auto ok = stream_upload(server.port(), key_and(channel), "chunked.bin", small_max / 2, true,
                          [&](char* p, std::size_t n) { a.fill(p, n); });
  ASSERT_TRUE(ok.response) << "no answer to a chunked upload";
  ASSERT_EQ(ok.response->status, 201) << ok.response->body;
  auto expected = a_copy.bytes(small_max / 2);
  auto o = ok.response->json().as_object();
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(expected));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, expected);

  // Over it, the server stops reading once the file passes files.max_bytes.
  byte_source b(12);
  auto over = stream_upload(server.port(), key_and(channel), "huge.bin", 8 * small_max, true,
                            [&](char* p, std::size_t n) { b.fill(p, n); });
  ASSERT_TRUE(over.response) << "no answer to an oversized chunked upload";
  EXPECT_EQ(over.response->status, 413) << over.response->body;
  EXPECT_EQ(over.response->error_code(), "payload_too_large") << over.response->body;
  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("after the chunked 413").empty());
}

// files.upload_grace_s + size / files.upload_min_bytes_per_s bounds an upload's whole body: one that trickles a
// byte at a time (each read in time, so the per-read timeout never fires) is answered 408 at that deadline.
class FilesTrickle : public Files {
 protected:
  FilesTrickle() : Files([](config& c) {
    c.files.upload_grace_s = 1;
    c.files.upload_min_bytes_per_s = 1000;  // 2,000 bytes expected: 1 s + 2 s
  }) {}
};

TEST_F(FilesTrickle, an_upload_that_trickles_past_its_overall_deadline_is_408) {
  auto body = multipart({file_part(std::string(2000 - 200, 'x'), "slow.bin")});
  ASSERT_LE(body.size(), 2000u);
  body.resize(2000, '\n');  // padding after the closing boundary is the multipart epilogue
  auto c = raw_http::connect(server.port());
  ASSERT_TRUE(c);
  auto h = key_and(channel);
  h["Content-Type"] = multipart_type();
  h["Content-Length"] = std::to_string(body.size());
  ASSERT_TRUE(c->send(request_head("POST", uploads, h)));
  auto started = std::chrono::steady_clock::now();
  std::size_t sent = 0;
  // One byte each 100 ms: 10 bytes/s, far under the rate; bounded at 20 s.
  while (sent < body.size() && !c->readable(100ms) && std::chrono::steady_clock::now() - started < 20s)
    if (!c->send(std::string_view(body).substr(sent++, 1))) break;
  auto r = c->read_response(5s);
  ASSERT_TRUE(r) << "no answer: the trickle was never cut off";
  EXPECT_EQ(r->status, 408) << r->head;
  EXPECT_EQ(r->error_code(), "upload_timeout") << r->body;
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(took, 2500ms);  // not before the deadline (3 s after the header)
  EXPECT_LT(sent, body.size());
  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("a prompt upload still works").empty());
}

}  // namespace
}  // namespace xconn::test
