// A stored file's life on the real server: files.ttl_s expiry (404 for the key, the signed URL and an outbound
// final), DELETE with the key, and a server restart on the same store (docs/protocol.md "Files").
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

class FilesShortTtl : public Files {
 protected:
  FilesShortTtl() : Files([](config& c) { c.files.ttl_s = 1; }) {}
};

TEST_F(FilesShortTtl, an_expired_file_is_404_for_the_key_and_the_signed_url) {
  auto before = now_ms();
  auto o = upload_ok("expires soon", "e.txt", "text/plain");
  auto ref = jstr(o, "file_ref");
  EXPECT_GE(jint(o, "expires_at"), before);
  EXPECT_LE(jint(o, "expires_at"), now_ms() + 1000 + 1000) << "files.ttl_s is 1";
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok);
  http_reply r;
  EXPECT_TRUE(wait_until([&] { return (r = get_with_key(ref)).status == 404; }, 5s)) << r.status;
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_GE(now_ms(), jint(o, "expires_at") - 1000) << "404 well before expires_at";
  r = get_without_key(u.target());
  EXPECT_EQ(r.status, 404) << "the signature is fine, the file is gone: " << r.body;
  EXPECT_EQ(http_call(server.port(), "DELETE", refs(ref), key()).status, 404);
  // An outbound final cannot name it any more either.
  auto sent = dp->send("chat.message", {{"message_id", "m-expired"}, {"text", "t"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                       channel);
  auto ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "rejected") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "code"), "file_ref_not_found") << json::serialize(*ack);
}

TEST_F(Files, delete_with_the_key_removes_the_file) {
  auto o = upload_ok("to be deleted", "d.txt", "text/plain");
  auto ref = jstr(o, "file_ref");
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok);
  auto r = http_call(server.port(), "DELETE", refs(ref));
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(error_of(r), "unauthorized");
  r = http_call(server.port(), "DELETE", u.target());
  EXPECT_EQ(r.status, 401) << "a signature is for reading only: " << r.body;
  ASSERT_EQ(get_with_key(ref).status, 200) << "an unauthorized DELETE deleted it";

  r = http_call(server.port(), "DELETE", refs(ref), key());
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(r.body, "");
  r = get_with_key(ref);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_EQ(get_without_key(u.target()).status, 404);
  r = http_call(server.port(), "DELETE", refs(ref), key());
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(error_of(r), "file_not_found") << r.body;
  EXPECT_EQ(http_call(server.port(), "DELETE", refs("file_" + std::string(32, '1')), key()).status, 404);
}

TEST_F(Files, files_survive_a_server_restart_on_the_same_store) {
  auto data = random_bytes(200000);
  auto o = upload_ok(data, "kept.bin");
  auto ref = jstr(o, "file_ref");
  auto u = parse_url(jstr(o, "download_url"));
  dp.reset();
  server.stop();
  server.start();
  auto r = get_with_key(ref);
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == data);
  // The signing secret is kept in the store: a URL handed out before the restart still works.
  auto s = get_without_key(u.target());
  EXPECT_EQ(s.status, 200);
  EXPECT_TRUE(s.body == data);
}

}  // namespace
}  // namespace xconn::test
