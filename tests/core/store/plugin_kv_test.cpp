// plugin_kv over a real LMDB folder: each plugin sees only its own keys, writes commit all or none, the size
// limits and the quota refuse with a clear code and store nothing, and everything survives reopening the store.
#include "core/store/plugin_kv.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>

namespace xconn {
namespace {

class PluginKv : public ::testing::Test {
 protected:
  void SetUp() override { reopen(); }

  void reopen(std::uint64_t quota = 1 << 20) {
    kv.reset();
    db.reset();
    auto opened = store::open({dir.str(), 1ull << 26, {std::string(plugin_kv::database)}});
    ASSERT_TRUE(opened) << opened.error();
    db = std::move(*opened);
    kv = std::make_unique<plugin_kv>(*db, quota);
  }

  // Writes and waits for the commit; the error, if any.
  std::optional<kv_error> write(const std::string& plugin, std::vector<kv_op> ops) {
    std::promise<std::optional<kv_error>> answered;
    kv->write(plugin, ops, [&](std::optional<kv_error> e) { answered.set_value(std::move(e)); });
    auto got = answered.get_future();
    EXPECT_EQ(got.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    return got.get();
  }

  std::map<std::string, std::string> all(const std::string& plugin, std::string_view prefix = "") {
    std::map<std::string, std::string> out;
    kv->scan(plugin, prefix, [&](std::string_view k, std::string_view v) {
      out.emplace(k, v);
      return true;
    });
    return out;
  }

  test::temp_dir dir;
  std::unique_ptr<store> db;
  std::unique_ptr<plugin_kv> kv;
};

kv_op put(std::string key, std::string value) { return {false, std::move(key), std::move(value)}; }
kv_op erase(std::string key) { return {true, std::move(key), {}}; }

TEST_F(PluginKv, PutGetDeleteAndSurviveReopening) {
  const std::string binary_key("bin\0ary", 7), binary_value("\x01\x00\x02", 3);
  ASSERT_FALSE(write("tg", {put("cursor", "41"), put("chat/1", "a"), put(binary_key, binary_value)}));
  EXPECT_EQ(kv->get("tg", "cursor"), "41");
  EXPECT_EQ(kv->get("tg", binary_key), binary_value);
  ASSERT_FALSE(write("tg", {put("cursor", "42"), erase("chat/1"), erase("never-there")}));
  reopen();
  EXPECT_EQ(kv->get("tg", "cursor"), "42");
  EXPECT_EQ(kv->get("tg", "chat/1"), std::nullopt);
  EXPECT_EQ(kv->used_bytes("tg"), std::string("cursor42").size() + 7 + 3);
}

TEST_F(PluginKv, EachPluginSeesOnlyItsOwnKeys) {
  ASSERT_FALSE(write("irc", {put("k", "irc's"), put("chan/a", "1"), put("chan/b", "2"), put("other", "3")}));
  ASSERT_FALSE(write("irc2", {put("k", "irc2's"), put("chan/c", "4")}));
  EXPECT_EQ(kv->get("irc", "k"), "irc's");
  EXPECT_EQ(kv->get("irc2", "k"), "irc2's");
  EXPECT_EQ(kv->get("ir", "k"), std::nullopt);
  EXPECT_EQ(all("irc", "chan/"), (std::map<std::string, std::string>{{"chan/a", "1"}, {"chan/b", "2"}}));
  EXPECT_EQ(all("irc").size(), 4u);
  EXPECT_EQ(all("irc2").size(), 2u);
  std::size_t seen = 0;
  EXPECT_EQ(kv->scan("irc", "", [&](std::string_view, std::string_view) { return ++seen < 2; }), 2u);
}

TEST_F(PluginKv, BadKeysAndValuesAreRefusedAndNothingOfTheWriteIsStored) {
  auto too_long_key = write("tg", {put("fine", "1"), put(std::string(plugin_kv::max_key_bytes + 1, 'k'), "v")});
  ASSERT_TRUE(too_long_key);
  EXPECT_EQ(too_long_key->code, "invalid_argument");
  EXPECT_EQ(too_long_key->message, "op 1: a key is 1..512 bytes");
  auto empty_key = write("tg", {put("", "v")});
  ASSERT_TRUE(empty_key);
  EXPECT_EQ(empty_key->code, "invalid_argument");
  const std::string secret_value = "sk-planted-" + std::string(plugin_kv::max_value_bytes, 'x');
  auto too_big = write("tg", {put("v", secret_value)});
  ASSERT_TRUE(too_big);
  EXPECT_EQ(too_big->code, "invalid_argument");
  EXPECT_EQ(too_big->message.find("sk-planted"), std::string::npos);
  std::vector<kv_op> flood(plugin_kv::max_ops_per_write + 1, put("k", "v"));
  EXPECT_EQ(write("tg", flood)->code, "invalid_argument");
  EXPECT_TRUE(all("tg").empty());
  EXPECT_EQ(kv->used_bytes("tg"), 0u);
  // The largest value allowed is stored whole.
  ASSERT_FALSE(write("tg", {put("max", std::string(plugin_kv::max_value_bytes, 'm'))}));
  EXPECT_EQ(kv->get("tg", "max")->size(), plugin_kv::max_value_bytes);
}

TEST_F(PluginKv, TheQuotaRefusesGrowthButNotShrinkingAndCountsAcrossReopening) {
  reopen(100'000);
  const std::string value(40'000, 'v');
  ASSERT_FALSE(write("tg", {put("a", value), put("b", value)}));
  auto over = write("tg", {put("c", value)});
  ASSERT_TRUE(over);
  EXPECT_EQ(over->code, "kv_quota_exceeded");
  EXPECT_EQ(kv->get("tg", "c"), std::nullopt);
  // Another plugin has a quota of its own.
  EXPECT_FALSE(write("irc", {put("c", value)}));
  // Replacing a value with a smaller one, and a delete with a put in one write, stay within it.
  EXPECT_FALSE(write("tg", {put("a", "small")}));
  EXPECT_FALSE(write("tg", {erase("b"), put("c", value)}));
  reopen(100'000);  // usage is read back from the store
  EXPECT_EQ(kv->used_bytes("tg"), 1 + 5 + 1 + value.size());
  EXPECT_EQ(write("tg", {put("d", value), put("e", value)})->code, "kv_quota_exceeded");
  // Over the quota already (it was lowered): a shrinking write still passes.
  reopen(65'536);
  EXPECT_FALSE(write("tg", {put("c", "tiny")}));
}

TEST_F(PluginKv, StagedOpsRideInTheCallersBatch) {
  write_batch batch;
  batch.put(std::string(plugin_kv::database), "unrelated", "x");
  ASSERT_FALSE(kv->stage("tg", {put("cursor", "7")}, batch));
  EXPECT_EQ(kv->get("tg", "cursor"), std::nullopt);  // not before the batch commits
  ASSERT_FALSE(db->write_sync(std::move(batch)));
  EXPECT_EQ(kv->get("tg", "cursor"), "7");
  write_batch refused;
  EXPECT_EQ(kv->stage("tg", {put("", "x")}, refused)->code, "invalid_argument");
  EXPECT_TRUE(refused.ops.empty());
}

}  // namespace
}  // namespace xconn
