#include "core/base/ids.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

namespace xconn {
namespace {

constexpr std::string_view base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

TEST(RandomId, HasPrefixAndLength) {
  const std::string id = random_id("cch_");
  ASSERT_EQ(id.size(), 4u + 22u);
  EXPECT_EQ(id.substr(0, 4), "cch_");
  EXPECT_EQ(random_id("pkt_", 5).size(), 9u);
  EXPECT_EQ(random_id("x_", 0), "x_");
  EXPECT_EQ(random_id("", 300).size(), 300u);  // longer than one batch of random bytes
}

TEST(RandomId, UsesOnlyBase62) {
  for (int i = 0; i < 100; ++i) {
    const std::string id = random_id("", 64);
    EXPECT_EQ(id.find_first_not_of(base62), std::string::npos) << id;
  }
}

TEST(RandomId, TenThousandAreUnique) {
  std::unordered_set<std::string> ids;
  for (int i = 0; i < 10000; ++i) ids.insert(random_id("pkt_"));
  EXPECT_EQ(ids.size(), 10000u);
}

// 256 % 62 == 8: with a plain modulo the first 8 characters would come up 25% more often than the others.
TEST(RandomId, CharactersAreEvenlySpread) {
  std::array<int, 62> counts{};
  for (int i = 0; i < 10000; ++i) {
    for (char c : random_id("", 22)) ++counts[base62.find(c)];
  }
  const double expected = 10000.0 * 22 / 62;  // ~3548, standard deviation ~59
  for (std::size_t i = 0; i < counts.size(); ++i) {
    EXPECT_GT(counts[i], expected * 0.88) << base62[i];
    EXPECT_LT(counts[i], expected * 1.12) << base62[i];
  }
}

TEST(UniqueId, HasPrefixLengthAndBase62) {
  const std::string id = unique_id("msg_");
  ASSERT_EQ(id.size(), 4u + 22u);
  EXPECT_EQ(id.substr(0, 4), "msg_");
  EXPECT_EQ(id.find_first_not_of(base62, 4), std::string::npos) << id;
  EXPECT_EQ(unique_id("x_", 0), "x_");
  EXPECT_EQ(unique_id("", 35).size(), 35u);  // not a multiple of one draw's 10 characters
}

// Ids from several threads at once: no two alike, within a thread or across them.
TEST(UniqueId, HundredThousandFromFourThreadsAreUnique) {
  std::array<std::vector<std::string>, 4> made;
  std::vector<std::thread> threads;
  for (auto& list : made)
    threads.emplace_back([&list] {
      for (int i = 0; i < 25000; ++i) list.push_back(unique_id("pkt_"));
    });
  for (auto& t : threads) t.join();
  std::unordered_set<std::string> ids;
  for (const auto& list : made) ids.insert(list.begin(), list.end());
  EXPECT_EQ(ids.size(), 100000u);
}

TEST(RandomHex, LengthAlphabetAndUniqueness) {
  EXPECT_EQ(random_hex(0), "");
  const std::string a = random_hex(32);
  ASSERT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, random_hex(32));
}

TEST(UnixMs, IsTheWallClockInMilliseconds) {
  using namespace std::chrono;
  const long long before = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  const long long now = unix_ms();
  const long long after = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
  EXPECT_GT(now, 1'600'000'000'000LL);  // after 2020: milliseconds, not seconds
}

}  // namespace
}  // namespace xconn
