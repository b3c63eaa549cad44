// Signed download URLs (docs/protocol.md "Files") over a real LMDB store: the secret is created once and persists, the
// URL has the documented shape and never carries the secret, and any edit of plugin, ref, expiry or signature (or an
// expiry that passed or does not parse) fails verification. Also the digests they rest on (crypto.hpp).
#include "core/files/download_links.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace xconn {
namespace {

constexpr long long now_s = 1'700'000'000LL;
constexpr std::string_view base = "https://files.example:8443";

std::unique_ptr<store> open_store(const std::string& path, std::vector<std::string> dbs = {"meta"}) {
  auto s = store::open({path, 1ull << 24, std::move(dbs)});
  if (!s) ADD_FAILURE() << s.error();
  return s ? std::move(*s) : nullptr;
}

bool is_hex(std::string_view s, std::size_t len) {
  return s.size() == len &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Every (key, value) of the meta database.
std::vector<std::pair<std::string, std::string>> meta(store& db) {
  std::vector<std::pair<std::string, std::string>> out;
  db.scan("meta", "", [&](std::string_view k, std::string_view v) {
    out.emplace_back(k, v);
    return true;
  });
  return out;
}

struct parsed_url {
  std::string exp;
  std::string sig;
};

// Splits a URL of the documented shape for (plugin, ref); nullopt (and a failure) when it has another shape.
std::optional<parsed_url> parse(std::string_view url, std::string_view plugin, std::string_view ref) {
  std::string prefix =
      std::string(base) + "/connectors/" + std::string(plugin) + "/files/refs/" + std::string(ref) + "?exp=";
  if (url.substr(0, prefix.size()) != prefix) {
    ADD_FAILURE() << "unexpected URL " << url << " (want prefix " << prefix << ")";
    return std::nullopt;
  }
  url.remove_prefix(prefix.size());
  auto amp = url.find("&sig=");
  if (amp == std::string_view::npos) {
    ADD_FAILURE() << "no &sig= in " << url;
    return std::nullopt;
  }
  parsed_url p{std::string(url.substr(0, amp)), std::string(url.substr(amp + 5))};
  if (!is_hex(p.sig, 64)) ADD_FAILURE() << "sig is not 64 lowercase hex: " << p.sig;
  return p;
}

class DownloadLinks : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = open_store(dir_.str());
    ASSERT_TRUE(db_);
    auto l = download_links::load(*db_);
    ASSERT_TRUE(l) << l.error();
    links_.emplace(std::move(*l));
    auto m = meta(*db_);
    ASSERT_EQ(m.size(), 1u) << "load() keeps exactly one entry in meta";
    secret_ = m[0].second;
  }

  // What the server's secret signs, computed here to build well-signed but malformed expiries.
  std::string forge(std::string_view plugin, std::string_view ref, std::string_view exp) const {
    return hmac_sha256_hex(secret_, std::string(plugin) + "\n" + std::string(ref) + "\n" + std::string(exp));
  }

  test::temp_dir dir_;
  std::unique_ptr<store> db_;
  std::optional<download_links> links_;
  std::string secret_;
  const std::string ref_ = "file_0123456789abcdef0123456789abcdef";
};

TEST_F(DownloadLinks, LoadCreatesA64HexSecretInMeta) {
  EXPECT_TRUE(is_hex(secret_, 64)) << secret_;
  // Another store gets another secret.
  test::temp_dir other;
  auto db2 = open_store(other.str());
  ASSERT_TRUE(db2);
  ASSERT_TRUE(download_links::load(*db2));
  auto m = meta(*db2);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(is_hex(m[0].second, 64));
  EXPECT_NE(m[0].second, secret_);
}

TEST_F(DownloadLinks, UrlShape) {
  const long long exp = now_s + 3600;
  auto url = links_->url(base, "echo", ref_, exp);
  auto p = parse(url, "echo", ref_);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->exp, std::to_string(exp));
  EXPECT_EQ(url, std::string(base) + "/connectors/echo/files/refs/" + ref_ + "?exp=" + std::to_string(exp) +
                     "&sig=" + p->sig);
  EXPECT_TRUE(links_->verify("echo", ref_, p->exp, p->sig, now_s));
  EXPECT_EQ(links_->url(base, "echo", ref_, exp), url) << "signing is deterministic";
}

TEST_F(DownloadLinks, SecretNeverAppearsInTheUrl) {
  ASSERT_TRUE(is_hex(secret_, 64));
  for (long long exp : {now_s, now_s + 1, now_s + 3600}) {
    auto url = links_->url(base, "echo", ref_, exp);
    EXPECT_EQ(url.find(secret_), std::string::npos) << url;
    EXPECT_EQ(url.find(secret_.substr(0, 16)), std::string::npos) << url;
  }
}

TEST_F(DownloadLinks, SecondLoadOnTheSameStoreVerifiesTheFirstsUrls) {
  auto url = links_->url(base, "echo", ref_, now_s + 60);
  auto p = parse(url, "echo", ref_);
  ASSERT_TRUE(p);

  auto again = download_links::load(*db_);
  ASSERT_TRUE(again) << again.error();
  EXPECT_TRUE(again->verify("echo", ref_, p->exp, p->sig, now_s));
  EXPECT_EQ(again->url(base, "echo", ref_, now_s + 60), url);
  auto m = meta(*db_);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].second, secret_) << "the secret changed on a second load";

  // A restart: a new store object over the same folder.
  db_.reset();
  db_ = open_store(dir_.str());
  ASSERT_TRUE(db_);
  auto restarted = download_links::load(*db_);
  ASSERT_TRUE(restarted) << restarted.error();
  EXPECT_TRUE(restarted->verify("echo", ref_, p->exp, p->sig, now_s));

  // Another server (another store) does not accept it.
  test::temp_dir other;
  auto db2 = open_store(other.str());
  ASSERT_TRUE(db2);
  auto stranger = download_links::load(*db2);
  ASSERT_TRUE(stranger) << stranger.error();
  EXPECT_FALSE(stranger->verify("echo", ref_, p->exp, p->sig, now_s));
}

TEST_F(DownloadLinks, VerifyRejectsEveryEdit) {
  const long long exp = now_s + 3600;
  auto p = parse(links_->url(base, "echo", ref_, exp), "echo", ref_);
  ASSERT_TRUE(p);
  ASSERT_TRUE(links_->verify("echo", ref_, p->exp, p->sig, now_s));

  // One hex digit of the signature changed, at each position.
  for (std::size_t i = 0; i < p->sig.size(); ++i) {
    auto sig = p->sig;
    sig[i] = sig[i] == '0' ? '1' : '0';
    EXPECT_FALSE(links_->verify("echo", ref_, p->exp, sig, now_s)) << "digit " << i;
  }
  std::string other_ref = ref_;
  other_ref.back() = other_ref.back() == 'f' ? 'e' : 'f';
  EXPECT_FALSE(links_->verify("echo", other_ref, p->exp, p->sig, now_s)) << "another ref";
  EXPECT_FALSE(links_->verify("echo", "file_" + random_hex(16), p->exp, p->sig, now_s)) << "another ref";
  EXPECT_FALSE(links_->verify("other", ref_, p->exp, p->sig, now_s)) << "another plugin";
  EXPECT_FALSE(links_->verify("ech", ref_, p->exp, p->sig, now_s)) << "another plugin";
  EXPECT_FALSE(links_->verify("", ref_, p->exp, p->sig, now_s)) << "no plugin";
  EXPECT_FALSE(links_->verify("echo", ref_, std::to_string(exp + 1), p->sig, now_s)) << "exp edited";
  EXPECT_FALSE(links_->verify("echo", ref_, std::to_string(exp + 86400 * 365), p->sig, now_s)) << "exp extended";
  EXPECT_FALSE(links_->verify("echo", ref_, "0" + p->exp, p->sig, now_s)) << "exp with a leading zero";
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, "", now_s)) << "empty sig";
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, p->sig.substr(0, 63), now_s)) << "63 digits";
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, p->sig.substr(0, 32), now_s)) << "32 digits";
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, p->sig + "0", now_s)) << "65 digits";
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, p->sig + p->sig, now_s)) << "128 digits";
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, secret_, now_s)) << "the secret itself";
  // The fields must not be shiftable into one another.
  EXPECT_FALSE(links_->verify("echo\n" + ref_, "", p->exp, p->sig, now_s));
  EXPECT_TRUE(links_->verify("echo", ref_, p->exp, p->sig, now_s)) << "untouched";
}

TEST_F(DownloadLinks, VerifyRejectsAnExpiryInThePast) {
  const long long exp = now_s + 10;
  auto p = parse(links_->url(base, "echo", ref_, exp), "echo", ref_);
  ASSERT_TRUE(p);
  EXPECT_TRUE(links_->verify("echo", ref_, p->exp, p->sig, now_s));
  EXPECT_TRUE(links_->verify("echo", ref_, p->exp, p->sig, exp)) << "the last second is still valid";
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, p->sig, exp + 1));
  EXPECT_FALSE(links_->verify("echo", ref_, p->exp, p->sig, exp + 86400));

  auto old = parse(links_->url(base, "echo", ref_, now_s - 1), "echo", ref_);
  ASSERT_TRUE(old);
  EXPECT_FALSE(links_->verify("echo", ref_, old->exp, old->sig, now_s));
}

TEST_F(DownloadLinks, VerifyRejectsMalformedExpiryEvenWhenSigned) {
  // Signatures made with the real secret, so only the parsing of exp can refuse them.
  ASSERT_TRUE(is_hex(secret_, 64));
  const std::string good = std::to_string(now_s + 60);
  ASSERT_TRUE(links_->verify("echo", ref_, good, forge("echo", ref_, good), now_s))
      << "forge() does not match sign()";

  const std::vector<std::string> malformed = {"",      "abc",  good + "x", "x" + good, " " + good,  good + " ",
                                              "+" + good, "1e12", "0x7fffffff", good + ".0", "-",       "-" + good,
                                              "-1",    "99999999999999999999999", "9223372036854775808",
                                              "1000000000000", "9999999999999"};
  for (const auto& exp : malformed) {
    EXPECT_FALSE(links_->verify("echo", ref_, exp, forge("echo", ref_, exp), now_s)) << "exp [" << exp << "]";
  }
  // Negative and huge expiries signed through url() itself.
  auto negative = parse(links_->url(base, "echo", ref_, -5), "echo", ref_);
  ASSERT_TRUE(negative);
  EXPECT_FALSE(links_->verify("echo", ref_, negative->exp, negative->sig, now_s));
  auto huge = parse(links_->url(base, "echo", ref_, 10'000'000'000'000LL), "echo", ref_);
  ASSERT_TRUE(huge);
  EXPECT_FALSE(links_->verify("echo", ref_, huge->exp, huge->sig, now_s));
}

TEST_F(DownloadLinks, LoadReplacesACorruptSecret) {
  ASSERT_EQ(meta(*db_).size(), 1u);
  const std::string key = meta(*db_)[0].first;
  ASSERT_FALSE(db_->write_sync(write_batch{}.put("meta", key, "short")));
  auto l = download_links::load(*db_);
  ASSERT_TRUE(l) << l.error();
  auto m = meta(*db_);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(is_hex(m[0].second, 64)) << m[0].second;
  auto p = parse(l->url(base, "echo", ref_, now_s + 5), "echo", ref_);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->sig, hmac_sha256_hex(m[0].second, "echo\n" + ref_ + "\n" + p->exp));
}

TEST(DownloadLinksStore, LoadFailsWithoutAMetaDatabase) {
  test::temp_dir dir;
  auto db = open_store(dir.str(), {"other"});
  ASSERT_TRUE(db);
  auto l = download_links::load(*db);
  ASSERT_FALSE(l);
  EXPECT_FALSE(l.error().empty());
}

TEST(Crypto, HmacSha256Rfc4231) {
  // Test case 1: key = 20 bytes of 0x0b.
  EXPECT_EQ(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 2.
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block size.
  EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // Binary keys and data pass through whole.
  EXPECT_NE(hmac_sha256_hex(std::string("k\0a", 3), "d"), hmac_sha256_hex(std::string("k\0b", 3), "d"));
  EXPECT_NE(hmac_sha256_hex("k", std::string("d\0a", 3)), hmac_sha256_hex("k", std::string("d\0b", 3)));
  EXPECT_NE(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            hmac_sha256_hex("Jeff", "what do ya want for nothing?"));
}

TEST(Crypto, Sha256Hex) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Crypto, Sha256StreamEqualsWholeDigest) {
  {
    sha256_stream empty;
    EXPECT_EQ(empty.final_hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  }
  {
    sha256_stream s;
    s.update("");
    s.update("");
    EXPECT_EQ(s.final_hex(), sha256_hex(""));
  }
  {
    sha256_stream s;
    s.update("a");
    s.update("");
    s.update("bc");
    EXPECT_EQ(s.final_hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }
  // Random data (with NUL bytes) in pieces of every awkward size around the 64-byte block.
  std::mt19937 gen(99);
  std::string data(300000, '\0');
  for (auto& c : data) c = static_cast<char>(gen() & 0xff);
  const std::string whole = sha256_hex(data);
  for (std::size_t step : {1u, 7u, 63u, 64u, 65u, 4093u, 65536u, 299999u, 300000u}) {
    sha256_stream s;
    for (std::size_t at = 0; at < data.size(); at += step) s.update(std::string_view(data).substr(at, step));
    EXPECT_EQ(s.final_hex(), whole) << "pieces of " << step;
  }
  sha256_stream partial;
  partial.update(std::string_view(data).substr(0, data.size() - 1));
  EXPECT_NE(partial.final_hex(), whole);
}

TEST(Crypto, ConstantTimeEqual) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
}

}  // namespace
}  // namespace xconn
