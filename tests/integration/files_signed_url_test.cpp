// Signed download URLs on the real server: they work without the key and only untouched (sig, exp, path), and
// turn 403 once their exp passes (spec §5; docs/protocol.md "Files").
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

class FilesShortUrl : public Files {
 protected:
  FilesShortUrl() : Files([](config& c) { c.files.url_ttl_s = 1; }) {}
};

TEST_F(Files, a_signed_url_works_without_the_key_and_only_untouched) {
  auto a = upload_ok("file A bytes", "a.txt", "text/plain");
  auto b = upload_ok("file B bytes", "b.txt", "text/plain");
  auto ua = parse_url(jstr(a, "download_url"));
  auto ub = parse_url(jstr(b, "download_url"));
  ASSERT_TRUE(ua.ok && ub.ok);
  EXPECT_EQ(ua.origin, "http://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(ua.path, refs(jstr(a, "file_ref")));

  auto r = get_without_key(ua.target());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "file A bytes");
  EXPECT_EQ(r.headers["content-type"], "text/plain");

  auto tampered = ua;
  tampered.sig = tamper(ua.sig);
  r = get_without_key(tampered.target());
  EXPECT_EQ(r.status, 403) << "one hex digit of sig changed: " << r.body;
  EXPECT_NE(r.body, "file A bytes");

  tampered = ua;
  tampered.exp = std::to_string(std::stoll(ua.exp) + 1);
  r = get_without_key(tampered.target());
  EXPECT_EQ(r.status, 403) << "exp moved by a second: " << r.body;
  tampered.exp = std::to_string(std::stoll(ua.exp) + 86400 * 365);
  EXPECT_EQ(get_without_key(tampered.target()).status, 403) << "exp moved by a year";

  tampered = ua;
  tampered.sig = std::string(ua.sig);
  for (auto& ch : tampered.sig) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (tampered.sig != ua.sig) {
    EXPECT_NE(get_without_key(tampered.target()).status, 200) << "sig in upper case";
  }

  r = get_without_key(ua.path);
  EXPECT_EQ(r.status, 401) << "no sig, no exp, no key: " << r.body;

  auto cross = ub;  // B's path with A's exp and sig
  cross.exp = ua.exp;
  cross.sig = ua.sig;
  r = get_without_key(cross.target());
  EXPECT_EQ(r.status, 403) << "A's signature on B's path: " << r.body;
  EXPECT_NE(r.body, "file B bytes");
  EXPECT_EQ(get_without_key(ub.target()).status, 200);

  // A signature of another plugin's path would need another plugin id in the HMAC; the same path under another
  // base is simply not this route.
  EXPECT_NE(get_without_key("/connectors/echo2/files/refs/" + ua.ref + "?exp=" + ua.exp + "&sig=" + ua.sig).status, 200);
}

TEST_F(FilesShortUrl, a_signed_url_turns_403_once_its_exp_passes) {
  auto o = upload_ok("short lived link", "s.txt", "text/plain");
  auto u = parse_url(jstr(o, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(o, "download_url");
  auto exp_ms = std::stoll(u.exp) * 1000;
  EXPECT_LE(exp_ms, now_ms() + 2000) << "files.url_ttl_s is 1";
  auto first_at = now_ms();
  auto first = get_without_key(u.target());
  if (first_at < exp_ms - 300) {  // else too late to tell
    EXPECT_EQ(first.status, 200) << "still inside exp";
  }
  int last = 0;
  EXPECT_TRUE(wait_until([&] { return (last = get_without_key(u.target()).status) == 403; }, 5s))
      << "still " << last << " after exp";
  EXPECT_GE(now_ms(), exp_ms - 1000) << "403 before exp";
  // The file itself lives on (files.ttl_s is the default): the key still reads it.
  EXPECT_EQ(get_with_key(u.ref).status, 200);
}

}  // namespace
}  // namespace xconn::test
