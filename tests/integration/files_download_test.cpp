// Downloads on the real server (GET/HEAD {echo_base}/files/refs/{ref} with the key): the bytes and every header,
// non-ASCII filenames, a 3 MiB round trip, the channel binding, hostile refs, ranges, HEAD and If-None-Match
// (spec §5; docs/protocol.md "Files"; RFC 9110 §13, §14).
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

TEST_F(Files, a_download_with_the_key_has_the_bytes_and_every_header) {
  auto data = random_bytes(5000);
  auto o = upload_ok(data, "report.pdf", "application/pdf");
  auto r = get_with_key(jstr(o, "file_ref"));
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 200);
  EXPECT_EQ(r.body, data);
  EXPECT_EQ(r.headers["content-type"], "application/pdf");
  EXPECT_EQ(r.headers["content-length"], "5000");
  EXPECT_EQ(r.headers["etag"], "\"" + sha256_of(data) + "\"");
  EXPECT_EQ(r.headers["accept-ranges"], "bytes");
  auto cd = r.headers["content-disposition"];
  EXPECT_TRUE(cd.starts_with("attachment")) << cd;
  EXPECT_NE(cd.find("filename=\"report.pdf\""), std::string::npos) << cd;
  EXPECT_NE(cd.find("filename*=UTF-8''report.pdf"), std::string::npos) << cd;
}

TEST_F(Files, a_non_ascii_filename_has_an_ascii_fallback_and_an_exact_filename_star) {
  const std::string name = "r\xc3\xa9sum\xc3\xa9 \xe6\x9d\xb1\xe4\xba\xac.pdf";  // "résumé 東京.pdf"
  auto o = upload_ok("%PDF-1.4 pretend", name, "application/pdf");
  EXPECT_EQ(jstr(o, "filename"), name);
  auto r = get_with_key(jstr(o, "file_ref"));
  ASSERT_EQ(r.status, 200);
  auto cd = r.headers["content-disposition"];
  static const std::regex fallback(R"(filename="([^"]*)\")");
  static const std::regex star(R"(filename\*=UTF-8''([^;\s]+))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cd, m, fallback)) << cd;
  auto ascii = m[1].str();
  EXPECT_FALSE(ascii.empty()) << cd;
  EXPECT_TRUE(std::all_of(ascii.begin(), ascii.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '\\'; })) << cd;
  EXPECT_TRUE(ascii.ends_with(".pdf")) << cd;
  ASSERT_TRUE(std::regex_search(cd, m, star)) << cd;
  auto encoded = m[1].str();
  // RFC 8187 attr-char or %XX only.
  EXPECT_TRUE(std::all_of(encoded.begin(), encoded.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$&+-.^_`|~%").find(c) != std::string_view::npos;
  })) << cd;
  EXPECT_EQ(percent_decode(encoded), name) << cd;
  EXPECT_TRUE(std::all_of(cd.begin(), cd.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) << "header is ASCII: " << cd;
}

TEST_F(Files, a_3_mib_random_file_round_trips_with_its_sha256) {
  auto data = random_bytes(3 * 1024 * 1024);
  auto digest = sha256_of(data);
  auto o = upload_ok(data, "random.bin");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(data.size()));
  EXPECT_EQ(jstr(o, "sha256"), digest);
  auto r = get_with_key(jstr(o, "file_ref"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), data.size());
  EXPECT_TRUE(r.body == data) << "the bytes differ";
  EXPECT_EQ(sha256_of(r.body), digest);
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(o, "download_url");
  auto s = get_without_key(u.target());
  ASSERT_EQ(s.status, 200);
  EXPECT_EQ(sha256_of(s.body), digest);
}

TEST_F(Files, a_download_naming_another_channel_is_403_and_its_own_channel_200) {
  auto other = dp->open_authenticated("tok-other-2");
  ASSERT_FALSE(other.empty());
  auto ref = upload_ref("bound to the first channel");
  auto r = get_with_key(ref, {{"X-XAgent-Connector-Channel-ID", other}});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body, "bound to the first channel");
  r = get_with_key(ref, {{"X-XAgent-Connector-Channel-ID", channel}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "bound to the first channel");
  // And the other way round.
  auto other_ref = upload_ref("bound to the second", other);
  EXPECT_EQ(get_with_key(other_ref, {{"X-XAgent-Connector-Channel-ID", channel}}).status, 403);
  EXPECT_EQ(get_with_key(other_ref, {{"X-XAgent-Connector-Channel-ID", other}}).status, 200);
}

TEST_F(Files, unknown_and_hostile_refs_are_404_and_the_server_stays_up) {
  auto real = upload_ref("a real one");
  ASSERT_TRUE(is_file_ref(real)) << real;
  std::string upper = "file_" + std::string(32, 'A');
  std::string upper_of_real = real;
  std::transform(upper_of_real.begin() + 5, upper_of_real.end(), upper_of_real.begin() + 5,
                 [](char ch) { return static_cast<char>(std::toupper(static_cast<unsigned char>(ch))); });
  std::vector<std::string> hostile{
      "file_0123456789abcdef0123456789abcdef",  // well formed, never issued
      "..%2F..%2Fetc%2Fpasswd",
      "../x",
      "..",
      "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "file_" + std::string(4995, 'a'),
      upper,
      upper_of_real,
      real + "%00",
      "%00",
      "file_%00" + real.substr(5),
      real + "%2F..",
      real.substr(0, real.size() - 1),
      "file_",
      "%ff%fe",
  };
  for (const auto& ref : hostile) {
    auto r = get_with_key(ref);
    EXPECT_EQ(r.status, 404) << ref.substr(0, 80) << ": " << r.body.substr(0, 200);
    EXPECT_NE(r.body, "a real one") << ref.substr(0, 80);
  }
  auto r = get_with_key("file_0123456789abcdef0123456789abcdef");
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_TRUE(healthy());
  EXPECT_EQ(get_with_key(real).body, "a real one");
}

TEST_F(Files, ranges_answer_206_with_exactly_those_bytes) {
  auto data = random_bytes(1000);
  const std::string size = std::to_string(data.size());
  auto ref = upload_ref(data);
  auto ranged = [&](const std::string& range) { return get_with_key(ref, {{"Range", range}}); };

  auto r = ranged("bytes=10-19");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 10-19/" + size);
  EXPECT_EQ(r.headers["content-length"], "10");
  EXPECT_EQ(r.body, data.substr(10, 10));

  r = ranged("bytes=0-0");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 0-0/" + size);
  EXPECT_EQ(r.body, data.substr(0, 1));

  r = ranged("bytes=990-");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 990-999/" + size);
  EXPECT_EQ(r.body, data.substr(990));

  r = ranged("bytes=-50");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 950-999/" + size);
  EXPECT_EQ(r.body, data.substr(950));

  r = ranged("bytes=900-5000");  // the end clamps to the file (RFC 9110 §14.1.2)
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.headers["content-range"], "bytes 900-999/" + size);
  EXPECT_EQ(r.body, data.substr(900));

  for (const std::string past : {"bytes=1000-", "bytes=1000-1005", "bytes=5000-6000"}) {
    r = ranged(past);
    EXPECT_EQ(r.status, 416) << past;
    EXPECT_EQ(r.headers["content-range"], "bytes */" + size) << past;
  }

  for (const std::string ignored : {"bytes=abc", "items=0-5", "bytes=5-2", "bytes=", "bytes=0-1,5-6", "bytes=-0x10",
                                    "bytes 0-10"}) {
    r = ranged(ignored);
    EXPECT_EQ(r.status, 200) << ignored;
    EXPECT_EQ(r.body, data) << ignored;
    EXPECT_EQ(r.headers.count("content-range"), 0u) << ignored;
  }

  // Through a signed URL too.
  auto u = parse_url(jstr(upload_ok(data, "r.bin"), "download_url"));
  auto s = http_call(server.port(), "GET", u.target(), {{"Range", "bytes=100-199"}});
  EXPECT_EQ(s.status, 206);
  EXPECT_EQ(s.body, data.substr(100, 100));
}

TEST_F(Files, head_has_the_headers_of_get_and_no_body) {
  auto data = random_bytes(4321);
  auto o = upload_ok(data, "head.png", "image/png");
  auto ref = jstr(o, "file_ref");
  auto get = get_with_key(ref);
  ASSERT_EQ(get.status, 200);
  auto c = raw_http::connect(server.port());
  ASSERT_TRUE(c);
  auto h = key();
  h["Connection"] = "close";
  ASSERT_TRUE(c->send(request_head("HEAD", refs(ref), h)));
  auto head = c->read_response(5s, true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200) << head->head;
  for (const char* name : {"content-type", "content-length", "etag", "accept-ranges", "content-disposition"})
    EXPECT_EQ(head->header(name), get.headers[name]) << name;
  EXPECT_EQ(head->header("content-length"), "4321");
  EXPECT_EQ(c->read_to_end(3s), "") << "HEAD sent body bytes";
  // An unknown ref is 404 for HEAD as well.
  auto missing = raw_request(server.port(), "HEAD", refs("file_" + std::string(32, '0')), key(), {}, true);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(Files, if_none_match_with_the_etag_is_304) {
  auto data = random_bytes(2000);
  auto ref = upload_ref(data);
  auto etag = "\"" + sha256_of(data) + "\"";
  auto r = get_with_key(ref, {{"If-None-Match", etag}});
  EXPECT_EQ(r.status, 304);
  EXPECT_EQ(r.body, "");
  r = get_with_key(ref, {{"If-None-Match", "\"" + std::string(64, '0') + "\""}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, data);
  auto u = parse_url(jstr(upload_ok(data), "download_url"));
  EXPECT_EQ(http_call(server.port(), "GET", u.target(), {{"If-None-Match", etag}}).status, 304);
}

}  // namespace
}  // namespace xconn::test
