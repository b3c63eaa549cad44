// sealer: AES-256-GCM round trips, refuses a changed byte, another record's associated data or another key; the key
// file is created once (0600), read back the same, and a damaged one is refused without quoting it.
#include "core/base/sealing.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace xconn {
namespace {

TEST(Sealer, RoundTripsAndBindsTheValueToItsRecord) {
  test::temp_dir dir;
  auto s = sealer::load((dir.path() / "sealing_key").string());
  ASSERT_TRUE(s) << s.error();
  const std::string secret = "tok-planted-secret-123";
  auto sealed = s->seal(secret, "relay\ncch_a");
  EXPECT_EQ(sealed.find(secret), std::string::npos);
  EXPECT_EQ(sealed.size(), 1 + 12 + secret.size() + 16);
  EXPECT_EQ(s->open(sealed, "relay\ncch_a"), secret);
  EXPECT_NE(s->seal(secret, "relay\ncch_a"), sealed);  // a fresh nonce each time
  EXPECT_EQ(s->open(sealed, "relay\ncch_b"), std::nullopt);
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    auto changed = sealed;
    changed[i] = static_cast<char>(changed[i] ^ 1);
    EXPECT_EQ(s->open(changed, "relay\ncch_a"), std::nullopt) << i;
  }
  EXPECT_EQ(s->open(sealed.substr(0, 20), "relay\ncch_a"), std::nullopt);
  EXPECT_EQ(s->open("", "relay\ncch_a"), std::nullopt);
  EXPECT_EQ(s->open(s->seal("", "x"), "x"), "");
}

TEST(Sealer, TheKeyFileIsCreatedOnceWithMode0600AndReadBack) {
  test::temp_dir dir;
  auto file = (dir.path() / "keys" / "sealing_key").string();
  auto first = sealer::load(file);
  ASSERT_TRUE(first) << first.error();
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = sealer::load(file);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->open(first->seal("v", "ad"), "ad"), "v");
  test::temp_dir other;
  auto stranger = sealer::load((other.path() / "sealing_key").string());
  ASSERT_TRUE(stranger);
  EXPECT_EQ(stranger->open(first->seal("v", "ad"), "ad"), std::nullopt);
}

TEST(Sealer, ADamagedKeyFileIsRefusedWithoutQuotingIt) {
  test::temp_dir dir;
  auto file = dir.path() / "sealing_key";
  for (std::string bad : {std::string("short"), std::string(64, 'z'), std::string(80, 'a')}) {
    test::write_file(file, bad);
    auto s = sealer::load(file.string());
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().find("holds no usable key"), std::string::npos) << s.error();
    EXPECT_EQ(s.error().find(bad), std::string::npos);
  }
}

// store.sealing_key_file with a second name (a hard link elsewhere, mode 0644): refused without quoting the key, and
// the other name keeps its mode.
TEST(Sealer, AKeyFileWithAnotherHardLinkIsRefusedAndLeftAlone) {
  test::temp_dir dir;
  auto file = dir.path() / "sealing_key";
  const std::string key(64, 'c');
  auto other = dir.path() / "copy_elsewhere";
  test::write_file(other, key);
  ::chmod(other.c_str(), 0644);
  std::filesystem::create_hard_link(other, file);
  auto s = sealer::load(file.string());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("has other hard links"), std::string::npos) << s.error();
  EXPECT_NE(s.error().find(file.string()), std::string::npos) << s.error();
  EXPECT_EQ(s.error().find(key), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(other.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  std::filesystem::remove(other);
  EXPECT_TRUE(sealer::load(file.string()));
}

}  // namespace
}  // namespace xconn
