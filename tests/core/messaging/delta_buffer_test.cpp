#include "core/messaging/delta_buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xconn {
namespace {

constexpr long long t0 = 1'700'000'000'000;  // unix ms
constexpr long long ttl = 600'000;

class DeltaBuffer : public ::testing::Test {
 protected:
  delta_buffer buffer{ttl, 64, 100};
};

// sequences --------------------------------------------------------------------------------------------------

TEST_F(DeltaBuffer, SequencesAppendWithGrowingText) {
  auto r1 = buffer.add("m1", 1, "Hel", t0);
  EXPECT_EQ(r1.status, delta_status::appended);
  EXPECT_EQ(r1.text, "Hel");
  EXPECT_TRUE(r1.first);
  EXPECT_FALSE(r1.evicted);

  auto r2 = buffer.add("m1", 2, "lo, ", t0 + 1);
  EXPECT_EQ(r2.status, delta_status::appended);
  EXPECT_EQ(r2.text, "Hello, ");
  EXPECT_FALSE(r2.first);

  auto r3 = buffer.add("m1", 3, "world", t0 + 2);
  EXPECT_EQ(r3.status, delta_status::appended);
  EXPECT_EQ(r3.text, "Hello, world");
  EXPECT_FALSE(r3.first);

  EXPECT_EQ(buffer.size(), 1u);
  EXPECT_EQ(buffer.bytes(), 12u);
}

TEST_F(DeltaBuffer, RepeatWithSameTextIsANoOp) {
  buffer.add("m1", 1, "a", t0);
  buffer.add("m1", 2, "bc", t0);
  buffer.add("m1", 3, "def", t0);
  EXPECT_EQ(buffer.add("m1", 2, "bc", t0).status, delta_status::repeat);
  EXPECT_EQ(buffer.add("m1", 1, "a", t0).status, delta_status::repeat);
  EXPECT_EQ(buffer.add("m1", 3, "def", t0).status, delta_status::repeat);
  EXPECT_EQ(buffer.bytes(), 6u);  // nothing appended twice
  EXPECT_EQ(buffer.add("m1", 4, "g", t0).text, "abcdefg");
}

TEST_F(DeltaBuffer, RepeatWithOtherTextIsInvalid) {
  buffer.add("m1", 1, "a", t0);
  buffer.add("m1", 2, "bc", t0);
  buffer.add("m1", 3, "def", t0);
  EXPECT_EQ(buffer.add("m1", 2, "bX", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", 2, "b", t0).status, delta_status::invalid_sequence);     // a prefix is not the same
  EXPECT_EQ(buffer.add("m1", 2, "bcd", t0).status, delta_status::invalid_sequence);   // nor a longer slice
  EXPECT_EQ(buffer.add("m1", 1, "", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", 4, "g", t0).text, "abcdefg");  // the state is untouched
}

TEST_F(DeltaBuffer, EmptyDeltasAreSequencesToo) {
  EXPECT_EQ(buffer.add("m1", 1, "", t0).status, delta_status::appended);
  EXPECT_EQ(buffer.add("m1", 2, "x", t0).text, "x");
  EXPECT_EQ(buffer.add("m1", 1, "", t0).status, delta_status::repeat);
  EXPECT_EQ(buffer.add("m1", 1, "x", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", 2, "x", t0).status, delta_status::repeat);
}

TEST_F(DeltaBuffer, GapIsInvalid) {
  buffer.add("m1", 1, "a", t0);
  buffer.add("m1", 2, "b", t0);
  EXPECT_EQ(buffer.add("m1", 4, "d", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", INT64_MAX, "d", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", 3, "c", t0).text, "abc");  // the gap left no trace
}

TEST_F(DeltaBuffer, FirstDeltaAboveOneIsInvalid) {
  EXPECT_EQ(buffer.add("m1", 2, "b", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.add("m1", 1, "a", t0).status, delta_status::appended);
}

TEST_F(DeltaBuffer, ZeroAndNegativeSequencesAreInvalid) {
  EXPECT_EQ(buffer.add("m1", 0, "a", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", -1, "a", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", INT64_MIN, "a", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.size(), 0u);
  buffer.add("m1", 1, "a", t0);
  EXPECT_EQ(buffer.add("m1", 0, "a", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(buffer.add("m1", -5, "a", t0).status, delta_status::invalid_sequence);
}

TEST_F(DeltaBuffer, MessagesAreIndependent) {
  buffer.add("m1", 1, "a", t0);
  EXPECT_TRUE(buffer.add("m2", 1, "x", t0).first);
  EXPECT_EQ(buffer.add("m1", 2, "b", t0).text, "ab");
  EXPECT_EQ(buffer.add("m2", 2, "y", t0).text, "xy");
  EXPECT_EQ(buffer.size(), 2u);
  EXPECT_EQ(buffer.bytes(), 4u);
}

// too_long ---------------------------------------------------------------------------------------------------

TEST_F(DeltaBuffer, TextUpToTheLimitFitsOneByteMoreIsTooLong) {
  delta_buffer small{ttl, 64, 10};
  EXPECT_EQ(small.add("m1", 1, "12345", t0).status, delta_status::appended);
  EXPECT_EQ(small.add("m1", 2, "123456", t0).status, delta_status::too_long);  // 11
  EXPECT_EQ(small.bytes(), 5u);                                                  // nothing changed
  auto r = small.add("m1", 2, "12345", t0);                                      // exactly 10
  EXPECT_EQ(r.status, delta_status::appended);
  EXPECT_EQ(r.text, "1234512345");
  EXPECT_EQ(small.add("m1", 3, "x", t0).status, delta_status::too_long);
  EXPECT_EQ(small.add("m1", 3, "", t0).status, delta_status::appended);
}

TEST_F(DeltaBuffer, FirstDeltaTooLongOpensNothing) {
  delta_buffer small{ttl, 64, 3};
  EXPECT_EQ(small.add("m1", 1, "abcd", t0).status, delta_status::too_long);
  EXPECT_EQ(small.size(), 0u);
  EXPECT_EQ(small.add("m1", 1, "abc", t0).status, delta_status::appended);
}

TEST_F(DeltaBuffer, ZeroMaxTextBytesIsNoLimit) {
  delta_buffer unlimited{ttl, 64, 0};
  EXPECT_EQ(unlimited.add("m1", 1, std::string(1 << 20, 'x'), t0).status, delta_status::appended);
  EXPECT_EQ(unlimited.bytes(), 1u << 20);
}

// eviction ---------------------------------------------------------------------------------------------------

TEST_F(DeltaBuffer, OpeningThe65thEvictsTheOldestOpened) {
  for (int i = 0; i < 64; ++i) EXPECT_FALSE(buffer.add("m" + std::to_string(i), 1, "x", t0 + i).evicted);
  // m0 is the oldest opened even though it is the most recently used.
  EXPECT_EQ(buffer.add("m0", 2, "y", t0 + 100).status, delta_status::appended);
  EXPECT_EQ(buffer.size(), 64u);
  EXPECT_EQ(buffer.bytes(), 65u);

  auto r = buffer.add("m64", 1, "z", t0 + 101);
  EXPECT_EQ(r.status, delta_status::appended);
  ASSERT_TRUE(r.evicted);
  EXPECT_EQ(*r.evicted, "m0");
  EXPECT_EQ(buffer.size(), 64u);
  EXPECT_EQ(buffer.bytes(), 64u);
  // m0 is gone, not completed: its next delta is a gap.
  EXPECT_EQ(buffer.add("m0", 3, "w", t0 + 102).status, delta_status::invalid_sequence);

  auto next = buffer.add("m65", 1, "z", t0 + 103);
  ASSERT_TRUE(next.evicted);
  EXPECT_EQ(*next.evicted, "m1");
}

TEST_F(DeltaBuffer, RefusedDeltasEvictNothing) {
  delta_buffer one{ttl, 1, 3};
  one.add("m1", 1, "a", t0);
  EXPECT_EQ(one.add("m2", 2, "a", t0).status, delta_status::invalid_sequence);
  EXPECT_EQ(one.add("m2", 1, "abcd", t0).status, delta_status::too_long);
  EXPECT_EQ(one.add("m1", 2, "b", t0).text, "ab");
  EXPECT_EQ(*one.add("m2", 1, "x", t0).evicted, "m1");
}

TEST_F(DeltaBuffer, ZeroMaxOpenKeepsOne) {
  delta_buffer zero{ttl, 0, 100};
  EXPECT_FALSE(zero.add("m1", 1, "a", t0).evicted);
  EXPECT_EQ(*zero.add("m2", 1, "b", t0).evicted, "m1");
  EXPECT_EQ(zero.size(), 1u);
}

// finish -----------------------------------------------------------------------------------------------------

TEST_F(DeltaBuffer, FinishReturnsTheTextThenLateDeltasAreCompleted) {
  buffer.add("m1", 1, "Hello", t0);
  buffer.add("m1", 2, " world", t0);
  auto text = buffer.finish("m1");
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "Hello world");
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.bytes(), 0u);

  EXPECT_EQ(buffer.add("m1", 3, "!", t0).status, delta_status::completed);
  EXPECT_EQ(buffer.add("m1", 2, " world", t0).status, delta_status::completed);
  EXPECT_EQ(buffer.add("m1", 1, "again", t0).status, delta_status::completed);
  EXPECT_EQ(buffer.add("m1", 0, "x", t0).status, delta_status::completed);  // completed is checked first
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_FALSE(buffer.finish("m1"));  // a second final finds nothing
}

TEST_F(DeltaBuffer, FinishWithoutDeltasReturnsNothingButRemembers) {
  EXPECT_FALSE(buffer.finish("m1"));
  EXPECT_EQ(buffer.add("m1", 1, "late", t0).status, delta_status::completed);
  EXPECT_EQ(buffer.size(), 0u);
}

TEST_F(DeltaBuffer, FinishLeavesOtherMessagesAlone) {
  buffer.add("m1", 1, "a", t0);
  buffer.add("m2", 1, "bb", t0);
  EXPECT_EQ(*buffer.finish("m1"), "a");
  EXPECT_EQ(buffer.size(), 1u);
  EXPECT_EQ(buffer.bytes(), 2u);
  EXPECT_EQ(buffer.add("m2", 2, "c", t0).text, "bbc");
}

TEST_F(DeltaBuffer, CompletedIdsAreBoundedToFourTimesMaxOpen) {
  delta_buffer small{ttl, 2, 100};  // remembers 8
  for (int i = 0; i < 9; ++i) small.finish("m" + std::to_string(i));
  small.finish("m8");  // already remembered: not a second entry
  // m0 was forgotten, m1..m8 are remembered.
  EXPECT_EQ(small.add("m0", 1, "a", t0).status, delta_status::appended);
  for (int i = 1; i < 9; ++i) EXPECT_EQ(small.add("m" + std::to_string(i), 1, "a", t0).status, delta_status::completed);
}

// expire -----------------------------------------------------------------------------------------------------

TEST_F(DeltaBuffer, ExpiresWhenTheLastDeltaIsTtlOld) {
  buffer.add("m1", 1, "a", t0);
  buffer.add("m1", 2, "b", t0 + 1000);  // the last delta counts, not the first
  buffer.add("m2", 1, "c", t0 + 5000);
  EXPECT_TRUE(buffer.expire(t0 + 1000 + ttl - 1).empty());
  EXPECT_EQ(buffer.size(), 2u);

  EXPECT_EQ(buffer.expire(t0 + 1000 + ttl), std::vector<std::string>{"m1"});
  EXPECT_EQ(buffer.size(), 1u);
  EXPECT_EQ(buffer.bytes(), 1u);

  EXPECT_TRUE(buffer.expire(t0 + 5000 + ttl - 1).empty());
  EXPECT_EQ(buffer.expire(t0 + 5000 + ttl), std::vector<std::string>{"m2"});
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.bytes(), 0u);
}

TEST_F(DeltaBuffer, ARepeatKeepsTheMessageAlive) {
  buffer.add("m1", 1, "a", t0);
  EXPECT_EQ(buffer.add("m1", 1, "a", t0 + 1000).status, delta_status::repeat);
  EXPECT_TRUE(buffer.expire(t0 + ttl).empty());
  EXPECT_EQ(buffer.add("m1", 1, "X", t0 + 2000).status, delta_status::invalid_sequence);  // refused: no refresh
  EXPECT_EQ(buffer.expire(t0 + 1000 + ttl).size(), 1u);
}

TEST_F(DeltaBuffer, AnExpiredMessageIsNotCompleted) {
  buffer.add("m1", 1, "a", t0);
  buffer.expire(t0 + ttl);
  EXPECT_EQ(buffer.add("m1", 2, "b", t0 + ttl).status, delta_status::invalid_sequence);
  auto r = buffer.add("m1", 1, "a", t0 + ttl);
  EXPECT_EQ(r.status, delta_status::appended);
  EXPECT_TRUE(r.first);
}

}  // namespace
}  // namespace xconn
