#include "core/base/api_keys.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace xconn {
namespace {
namespace fs = std::filesystem;

api_keys load_ok(const std::vector<std::string>& configured, const std::string& store) {
  auto r = api_keys::load(configured, store);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r ? *r : api_keys{};
}

unsigned mode_of(const fs::path& file) {
  struct stat st {};
  EXPECT_EQ(::stat(file.c_str(), &st), 0) << file;
  return st.st_mode & 0777;
}

TEST(ApiKeys, ConfiguredKeysAreUsedAndNoFileIsWritten) {
  test::temp_dir dir;
  auto keys = load_ok({"xck_first_key_0123456789", "xck_second_key_987654321"}, dir.str());
  EXPECT_EQ(keys.keys(), (std::vector<std::string>{"xck_first_key_0123456789", "xck_second_key_987654321"}));
  EXPECT_EQ(keys.key_file(), "");
  EXPECT_FALSE(fs::exists(dir.path() / "api_key"));
  EXPECT_TRUE(keys.authorizes("Bearer xck_first_key_0123456789"));
  EXPECT_TRUE(keys.authorizes("Bearer xck_second_key_987654321"));
  EXPECT_FALSE(keys.authorizes("Bearer xck_third_key_000000000"));
}

TEST(ApiKeys, GeneratesAKeyFileWithMode0600) {
  test::temp_dir dir;
  auto store = dir.path() / "store";  // not there yet
  auto keys = load_ok({}, store.string());
  auto file = store / "api_key";
  EXPECT_EQ(keys.key_file(), file.string());
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(mode_of(file), 0600u);
  ASSERT_EQ(keys.keys().size(), 1u);
  const auto& key = keys.keys()[0];
  EXPECT_GE(key.size(), 32u);
  EXPECT_EQ(test::read_file(file), key);
  EXPECT_TRUE(keys.authorizes("Bearer " + key));
}

TEST(ApiKeys, GeneratedKeyIsStableAcrossLoads) {
  test::temp_dir dir;
  auto first = load_ok({}, dir.str());
  auto second = load_ok({}, dir.str());
  ASSERT_EQ(first.keys().size(), 1u);
  EXPECT_EQ(first.keys(), second.keys());
  EXPECT_EQ(mode_of(dir.path() / "api_key"), 0600u);
}

TEST(ApiKeys, GeneratedKeysDifferBetweenStores) {
  test::temp_dir a, b;
  EXPECT_NE(load_ok({}, a.str()).keys(), load_ok({}, b.str()).keys());
}

TEST(ApiKeys, ExistingFileIsReadTrimmedAndLooseModeFixed) {
  test::temp_dir dir;
  auto file = dir.path() / "api_key";
  test::write_file(file, "xck_hand_written_key_0123456789\n");
  ASSERT_EQ(::chmod(file.c_str(), 0644), 0);
  auto keys = load_ok({}, dir.str());
  EXPECT_EQ(keys.keys(), std::vector<std::string>{"xck_hand_written_key_0123456789"});
  EXPECT_EQ(mode_of(file), 0600u);
  EXPECT_TRUE(keys.authorizes("Bearer xck_hand_written_key_0123456789"));

  ASSERT_EQ(::chmod(file.c_str(), 0666), 0);
  load_ok({}, dir.str());
  EXPECT_EQ(mode_of(file), 0600u);
}

TEST(ApiKeys, TooShortFileIsRefused) {
  test::temp_dir dir;
  auto file = dir.path() / "api_key";
  test::write_file(file, "short-key\n");
  auto r = api_keys::load({}, dir.str());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("api_key"), std::string::npos) << r.error();
  // And left alone: a short key is never replaced behind the operator's back.
  EXPECT_EQ(test::read_file(file), "short-key\n");

  test::write_file(file, "");
  EXPECT_FALSE(api_keys::load({}, dir.str()).has_value());
  test::write_file(file, "   \n\n");
  EXPECT_FALSE(api_keys::load({}, dir.str()).has_value());
}

TEST(ApiKeys, UnwritableStoreIsAnError) {
  test::temp_dir dir;
  auto blocker = dir.path() / "file";
  test::write_file(blocker, "x");
  auto r = api_keys::load({}, (blocker / "store").string());  // a file stands where the folder should be
  ASSERT_FALSE(r.has_value());
  EXPECT_FALSE(r.error().empty());
}

class ApiKeysAuthorizes : public ::testing::Test {
 protected:
  const std::string key = "xck_0123456789abcdefghij";
  api_keys keys = *api_keys::load({key}, "");
};

TEST_F(ApiKeysAuthorizes, ExactKeyWithBearerScheme) {
  EXPECT_TRUE(keys.authorizes("Bearer " + key));
  EXPECT_TRUE(keys.authorizes("bearer " + key));
  EXPECT_TRUE(keys.authorizes("BEARER " + key));
}

TEST_F(ApiKeysAuthorizes, PrefixSuffixAndNearMissesAreRefused) {
  EXPECT_FALSE(keys.authorizes("Bearer " + key.substr(0, key.size() - 1)));
  EXPECT_FALSE(keys.authorizes("Bearer " + key + "x"));
  EXPECT_FALSE(keys.authorizes("Bearer " + key + " "));
  EXPECT_FALSE(keys.authorizes("Bearer  " + key));
  EXPECT_FALSE(keys.authorizes("Bearer x" + key));
  EXPECT_FALSE(keys.authorizes("Bearer " + key.substr(1)));
  std::string flipped = key;
  flipped.back() = 'J';
  EXPECT_FALSE(keys.authorizes("Bearer " + flipped));
  EXPECT_FALSE(keys.authorizes("Bearer " + key + '\0'));
}

TEST_F(ApiKeysAuthorizes, EmptyAndOtherSchemesAreRefused) {
  EXPECT_FALSE(keys.authorizes(""));
  EXPECT_FALSE(keys.authorizes("Bearer"));
  EXPECT_FALSE(keys.authorizes("Bearer "));
  EXPECT_FALSE(keys.authorizes(key));
  EXPECT_FALSE(keys.authorizes(" Bearer " + key));
  EXPECT_FALSE(keys.authorizes("Bearer:" + key));
  EXPECT_FALSE(keys.authorizes("Bearer\t" + key));
  EXPECT_FALSE(keys.authorizes("Basic " + key));
  EXPECT_FALSE(keys.authorizes("Token " + key));
  EXPECT_FALSE(keys.authorizes("Bearerx" + key));
  EXPECT_FALSE(keys.authorizes("Bear " + key));
}

TEST(ApiKeys, AnEmptyConfiguredKeyNeverMatches) {
  auto r = api_keys::load({""}, "");
  if (!r) return;  // refusing an empty key at load is fine too
  EXPECT_FALSE(r->authorizes("Bearer "));
  EXPECT_FALSE(r->authorizes("Bearer"));
  EXPECT_FALSE(r->authorizes(""));
}

// {store}/api_key planted as a symbolic link to a file of someone else's choosing: refused, and the file it points
// to neither read as a key nor changed (its mode stays 0644). A folder or a FIFO there is refused too.
TEST(ApiKeys, AKeyFileThatIsALinkOrNotAPlainFileIsRefusedAndLeftAlone) {
  xconn::test::temp_dir dir;
  auto target = dir.path() / "elsewhere";
  xconn::test::write_file(target, "xck_planted_key_0123456789abcdef0123456789");
  ::chmod(target.c_str(), 0644);
  auto store = dir.path() / "store";
  fs::create_directories(store);
  fs::create_symlink(target, store / "api_key");
  auto loaded = api_keys::load({}, store.string());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().find("symbolic link"), std::string::npos) << loaded.error();
  EXPECT_EQ(loaded.error().find("planted"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u) << "the link's target was not touched";

  fs::remove(store / "api_key");
  fs::create_directory(store / "api_key");
  EXPECT_FALSE(api_keys::load({}, store.string()));
  fs::remove(store / "api_key");
  ASSERT_EQ(::mkfifo((store / "api_key").c_str(), 0600), 0);
  auto fifo = api_keys::load({}, store.string());  // O_NONBLOCK: a FIFO neither blocks the start nor is read
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().find("not a plain file"), std::string::npos) << fifo.error();
}

// {store}/api_key given a second name by a hard link (the other name 0644, readable by anyone): refused, naming the
// file but not the key, and neither name's mode changed. Once the other name is gone the same file is taken.
TEST(ApiKeys, AKeyFileWithAnotherHardLinkIsRefusedAndLeftAlone) {
  xconn::test::temp_dir dir;
  auto store = dir.path() / "store";
  fs::create_directories(store);
  const std::string secret = "xck_linked_key_0123456789abcdef0123456789";
  auto other = dir.path() / "world_readable";
  xconn::test::write_file(other, secret);
  ::chmod(other.c_str(), 0644);
  fs::create_hard_link(other, store / "api_key");
  auto loaded = api_keys::load({}, store.string());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().find("has other hard links"), std::string::npos) << loaded.error();
  EXPECT_NE(loaded.error().find((store / "api_key").string()), std::string::npos) << loaded.error();
  EXPECT_EQ(loaded.error().find("linked_key"), std::string::npos) << "the key is never quoted";
  EXPECT_EQ(mode_of(other), 0644u) << "the other name's mode was not changed";
  EXPECT_EQ(xconn::test::read_file(store / "api_key"), secret);

  fs::remove(other);
  auto alone = load_ok({}, store.string());
  ASSERT_EQ(alone.keys().size(), 1u);
  EXPECT_EQ(alone.keys()[0], secret);
  EXPECT_EQ(mode_of(store / "api_key"), 0600u);
}

}  // namespace
}  // namespace xconn
