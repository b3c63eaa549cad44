// Uploads on the real server over loopback HTTP (POST {echo_base}/files/uploads): who may upload, what a
// multipart/form-data body must be, the 201 answer and its fields, file and MIME types, filenames reduced to a safe
// last component, Expect: 100-continue, and data that looks like a boundary (spec §3,
// §5; docs/protocol.md "Files").
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

TEST_F(Files, an_upload_needs_the_key) {
  auto body = multipart({file_part("x")});
  std::map<std::string, std::string> h{{"X-XAgent-Connector-Channel-ID", channel}, {"Content-Type", multipart_type()}};
  auto r = http_call(server.port(), "POST", uploads, h, body);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(error_of(r), "unauthorized") << r.body;
  h["Authorization"] = "Bearer " + server.key() + "x";
  r = http_call(server.port(), "POST", uploads, h, body);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(error_of(r), "unauthorized") << r.body;
  EXPECT_FALSE(upload_ref("x").empty()) << "the same request with the key is fine";
}

TEST_F(Files, an_upload_is_a_post) {
  for (const char* method : {"GET", "PUT", "DELETE", "PATCH"}) {
    auto r = http_call(server.port(), method, uploads, key_and(channel));
    EXPECT_EQ(r.status, 405) << method << ": " << r.body;
  }
}

TEST_F(Files, an_upload_needs_a_known_signed_in_channel) {
  auto body = multipart({file_part("abc")});
  auto r = post_upload("", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r), "connector_channel_id_required") << r.body;

  r = post_upload("cch_AAAAAAAAAAAAAAAAAAAAAA", body);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(error_of(r), "connection_not_found") << r.body;

  auto signed_out = dp->open();
  ASSERT_FALSE(signed_out.empty());
  r = post_upload(signed_out, body);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(error_of(r), "connection_not_authenticated") << r.body;

  r = post_upload(channel, body);
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(Files, a_body_that_is_not_multipart_form_data_is_invalid_multipart) {
  auto body = multipart({file_part("abc")});
  for (const std::string& type : std::vector<std::string>{"text/plain", "application/json", "multipart/form-data",
                                                          "multipart/form-data; charset=utf-8",
                                                          "multipart/mixed; boundary=" + boundary}) {
    auto r = post_upload(channel, body, {{"Content-Type", type}});
    EXPECT_EQ(r.status, 400) << type << ": " << r.body;
    EXPECT_EQ(error_of(r), "invalid_multipart") << type << ": " << r.body;
  }
  auto h = key_and(channel);  // no Content-Type at all
  auto r = http_call(server.port(), "POST", uploads, h, body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r), "invalid_multipart") << r.body;
}

TEST_F(Files, a_malformed_multipart_body_is_invalid_multipart_and_the_next_upload_is_fine) {
  struct bad_case {
    std::string what;
    std::string body;
  };
  std::vector<bad_case> cases;
  cases.push_back({"no closing delimiter", multipart({file_part("some bytes")}, false)});
  cases.push_back({"no closing delimiter, data ending in CRLF", multipart({file_part("some bytes")}, false) + "\r\n"});
  auto fat = file_part("abc");
  fat.extra_headers = "X-Padding: " + std::string(9 * 1024, 'a') + "\r\n";
  cases.push_back({"part headers over 8 KiB", multipart({fat})});
  std::vector<form_part> many{file_part("abc")};
  for (int i = 1; i <= 16; ++i) many.push_back(field("extra" + std::to_string(i), "v"));
  cases.push_back({"17 parts", multipart(many)});
  cases.push_back({"no file part", multipart({field("recipient_ref", "someone")})});
  cases.push_back({"two file parts", multipart({file_part("one", "a.txt"), file_part("two", "b.txt")})});
  cases.push_back({"garbage", "this is not multipart at all"});
  cases.push_back({"empty body", ""});
  cases.push_back({"another boundary", multipart({file_part("abc")}, true, "someOtherBoundary")});
  for (const auto& c : cases) {
    auto r = post_upload(channel, c.body);
    EXPECT_EQ(r.status, 400) << c.what << ": " << r.body;
    EXPECT_EQ(error_of(r), "invalid_multipart") << c.what << ": " << r.body;
    EXPECT_FALSE(r.json().is_object() && r.json().as_object().contains("file_ref")) << c.what;
  }
  EXPECT_TRUE(healthy());
  EXPECT_FALSE(upload_ref("after the bad ones").empty());
}

TEST_F(Files, a_successful_upload_answers_201_with_every_field) {
  const std::string data = "hello transfer plane\n";
  auto before = now_ms();
  auto r = post_upload(channel, multipart({field("recipient_ref", "peer-1"), file_part(data, "notes.txt", "text/plain"),
                                           field("reply_token", "rt-1")}));
  auto after = now_ms();
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_NE(r.headers["content-type"].find("application/json"), std::string::npos) << r.headers["content-type"];
  auto v = r.json();
  ASSERT_TRUE(v.is_object()) << r.body;
  auto o = v.as_object();
  auto ref = jstr(o, "file_ref");
  EXPECT_TRUE(is_file_ref(ref)) << ref;
  EXPECT_EQ(jstr(o, "file_type"), "file");
  EXPECT_EQ(jstr(o, "filename"), "notes.txt");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(data.size()));
  const std::int64_t ttl_ms = 604800LL * 1000;
  EXPECT_GE(jint(o, "expires_at"), before + ttl_ms - 2000) << r.body;
  EXPECT_LE(jint(o, "expires_at"), after + ttl_ms + 2000) << r.body;
  EXPECT_EQ(jstr(o, "mime_type"), "text/plain");
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  auto url = jstr(o, "download_url");
  static const std::regex shape(R"(^http://127\.0\.0\.1:([0-9]+)/connectors/echo/files/refs/(file_[0-9a-f]{32})\?exp=([0-9]+)&sig=([0-9a-f]{64})$)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(url, m, shape)) << url;
  EXPECT_EQ(m[1].str(), std::to_string(server.port()));
  EXPECT_EQ(m[2].str(), ref);
  auto exp = std::stoll(m[3].str());
  EXPECT_GE(exp, before / 1000 + 3600 - 2) << "exp is unix seconds, files.url_ttl_s (3600) ahead";
  EXPECT_LE(exp, after / 1000 + 3600 + 2);
  // Every upload is a new file_ref, also for the same bytes.
  auto again = upload_ok(data, "notes.txt", "text/plain");
  EXPECT_TRUE(is_file_ref(jstr(again, "file_ref")));
  EXPECT_NE(jstr(again, "file_ref"), ref);
  EXPECT_EQ(jstr(again, "sha256"), sha256_of(data));
}

TEST_F(Files, an_empty_file_is_a_file_too) {
  auto o = upload_ok("", "empty.txt", "text/plain");
  EXPECT_EQ(jint(o, "byte_size"), 0);
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(""));
  auto r = get_with_key(jstr(o, "file_ref"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.headers["content-length"], "0");
}

TEST_F(Files, file_type_and_mime_type_come_from_the_part_else_the_extension) {
  struct type_case {
    std::string filename;
    std::optional<std::string> content_type;
    std::string mime;  // expected; a trailing '/' means "this major type"
    std::string file_type;
  };
  std::vector<type_case> cases{
      {"pic.png", "image/png", "image/png", "image"},
      {"pic.bin", "image/webp", "image/webp", "image"},
      {"sound.dat", "audio/ogg", "audio/ogg", "audio"},
      {"movie.xyz", "video/webm", "video/webm", "video"},
      {"doc.pdf", "application/pdf", "application/pdf", "file"},
      {"photo.jpg", std::nullopt, "image/jpeg", "image"},
      {"graphic.png", std::nullopt, "image/png", "image"},
      {"clip.mp4", std::nullopt, "video/mp4", "video"},
      {"song.mp3", std::nullopt, "audio/", "audio"},
      {"paper.pdf", std::nullopt, "application/pdf", "file"},
      {"blob.zzqqx", std::nullopt, "application/octet-stream", "file"},
      {"noextension", std::nullopt, "application/octet-stream", "file"},
  };
  for (const auto& c : cases) {
    auto o = upload_ok("bytes of " + c.filename, c.filename, c.content_type);
    auto mime = jstr(o, "mime_type");
    if (c.mime.ends_with('/')) {
      EXPECT_TRUE(mime.starts_with(c.mime)) << c.filename << ": " << mime;
    } else {
      EXPECT_EQ(mime, c.mime) << c.filename;
    }
    EXPECT_EQ(jstr(o, "file_type"), c.file_type) << c.filename;
    EXPECT_EQ(jstr(o, "filename"), c.filename);
    auto r = get_with_key(jstr(o, "file_ref"));
    EXPECT_EQ(r.headers["content-type"], mime) << c.filename << ": the download says what the upload said";
  }
}

TEST_F(Files, a_filename_is_reduced_to_its_last_component_without_control_characters) {
  std::vector<std::pair<std::string, std::string>> cases{
      {"../../etc/passwd", "passwd"},
      {"/var/tmp/report.txt", "report.txt"},
      {"dir/sub/inner.txt", "inner.txt"},
      {std::string("tab\there.txt"), "tabhere.txt"},
  };
  for (const auto& [sent, kept] : cases) {
    auto o = upload_ok("content", sent, "text/plain");
    EXPECT_EQ(jstr(o, "filename"), kept) << "sent " << json::serialize(json::value(sent));
    auto r = get_with_key(jstr(o, "file_ref"));
    EXPECT_EQ(r.status, 200);
    auto cd = r.headers["content-disposition"];
    EXPECT_NE(cd.find("filename=\"" + kept + "\""), std::string::npos) << cd;
    EXPECT_EQ(cd.find(".."), std::string::npos) << cd;
    EXPECT_EQ(cd.find('/'), std::string::npos) << cd;
  }
}

// A raw control character in a part's header is malformed (RFC 9110 §5.5): refused, nothing stored.
TEST_F(Files, a_raw_control_character_in_an_upload_filename_is_invalid_multipart) {
  auto r = post_upload(channel, multipart({file_part("content", std::string("re\x01po\x1frt.txt"), "text/plain")}));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r), "invalid_multipart") << r.body;
  EXPECT_EQ(r.body.find('\x01'), std::string::npos) << "the error does not quote the input";
}

// Through echo's /inject the name is JSON, so control characters and paths can reach the store: removed there.
TEST_F(Files, an_injected_attachment_name_loses_its_path_and_control_characters) {
  auto r = inject(channel, {{"text", "named"},
                            {"files", json::array{json::object{{"filename", std::string("../../x/ev\x01il\x7f.png")},
                                                               {"mime_type", "image/png"},
                                                               {"content_base64", base64(png_bytes(64))}}}}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  auto* files = p.if_contains("files");
  ASSERT_TRUE(files && files->is_array() && files->as_array().size() == 1 && files->as_array()[0].is_object())
      << json::serialize(p);
  auto f = files->as_array()[0].as_object();
  EXPECT_EQ(jstr(f, "filename"), "evil.png") << json::serialize(f);
  auto d = get_with_key(jstr(f, "file_ref"));
  EXPECT_NE(d.headers["content-disposition"].find("filename=\"evil.png\""), std::string::npos)
      << d.headers["content-disposition"];
  dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
}

TEST_F(Files, expect_100_continue_is_answered_before_the_body_is_sent) {
  const std::string data = random_bytes(40000);
  auto body = multipart({file_part(data, "continued.bin")});
  auto c = raw_http::connect(server.port());
  ASSERT_TRUE(c);
  auto h = key_and(channel);
  h["Content-Type"] = multipart_type();
  h["Content-Length"] = std::to_string(body.size());
  h["Expect"] = "100-continue";
  ASSERT_TRUE(c->send(request_head("POST", uploads, h)));
  auto interim = c->read_response(5s);
  ASSERT_TRUE(interim) << "no answer to the head alone: the server waits for a body it should have asked for";
  EXPECT_EQ(interim->status, 100) << interim->head;
  ASSERT_TRUE(c->send(body));
  auto final_answer = c->read_response(10s);
  ASSERT_TRUE(final_answer);
  ASSERT_EQ(final_answer->status, 201) << final_answer->body;
  auto o = final_answer->json().as_object();
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, data);
}

TEST_F(Files, form_fields_may_come_in_any_order_around_the_file) {
  const std::string data = "ordered";
  auto r = post_upload(channel, multipart({field("reply_token", "rt"), file_part(data, "o.txt", "text/plain"),
                                           field("recipient_ref", "peer")}));
  ASSERT_EQ(r.status, 201) << r.body;
  auto ref = jstr(r.json().as_object(), "file_ref");
  EXPECT_EQ(get_with_key(ref).body, data);
  r = post_upload(channel, multipart({file_part(data, "o.txt", "text/plain"), field("recipient_ref", "peer")}));
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(Files, data_that_looks_like_a_boundary_is_kept_intact) {
  // The delimiter is CRLF + "--" + boundary; anything short of that is data.
  std::string data = "--" + boundary + "x\r\n--" + boundary.substr(0, 10) + "\r\n-\r\n\r\n--\r\n" + random_bytes(5000);
  auto o = upload_ok(data, "tricky.bin");
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(data.size()));
  EXPECT_EQ(jstr(o, "sha256"), sha256_of(data));
  EXPECT_EQ(get_with_key(jstr(o, "file_ref")).body, data);
}

}  // namespace
}  // namespace xconn::test
