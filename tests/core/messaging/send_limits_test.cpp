#include "core/messaging/send_limits.hpp"

#include <gtest/gtest.h>

#include <string>

namespace xconn {
namespace {

constexpr long long t0 = 1'700'000'000'000;  // unix ms
constexpr long long minute = send_limits::window_ms;

// code points ------------------------------------------------------------------------------------------------

TEST(SendLimits, CodePointsOfAscii) {
  EXPECT_EQ(send_limits::code_points(""), 0u);
  EXPECT_EQ(send_limits::code_points("hello"), 5u);
}

TEST(SendLimits, CodePointsOfMultiByteUtf8) {
  EXPECT_EQ(send_limits::code_points("\xC3\xA9"), 1u);                   // é, 2 bytes
  EXPECT_EQ(send_limits::code_points("\xE4\xBD\xA0\xE5\xA5\xBD"), 2u);  // 你好, 3 bytes each
  EXPECT_EQ(send_limits::code_points("\xF0\x9F\x98\x80"), 1u);          // 😀, 4 bytes
  EXPECT_EQ(send_limits::code_points("a\xC3\xA9\xE4\xBD\xA0\xF0\x9F\x98\x80z"), 5u);
}

TEST(SendLimits, CodePointsOfInvalidUtf8CountNonContinuationBytes) {
  EXPECT_EQ(send_limits::code_points("\x80\x80"), 0u);  // stray continuation bytes
  EXPECT_EQ(send_limits::code_points("\xC3"), 1u);      // a truncated lead byte
  EXPECT_EQ(send_limits::code_points("\xFF\xFE"), 2u);
  EXPECT_EQ(send_limits::code_points(std::string("a\0b", 3)), 3u);
}

// too_long ---------------------------------------------------------------------------------------------------

TEST(SendLimits, TooLongBoundaryInCodePoints) {
  send_limits limits{3, 0};
  EXPECT_FALSE(limits.too_long(""));
  EXPECT_FALSE(limits.too_long("abc"));
  EXPECT_TRUE(limits.too_long("abcd"));
  // Three code points in nine bytes fit; four do not.
  EXPECT_FALSE(limits.too_long("\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xBD\xA0"));
  EXPECT_TRUE(limits.too_long("\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xBD\xA0" "a"));
  EXPECT_FALSE(limits.too_long("\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80"));
  EXPECT_TRUE(limits.too_long("\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80"));
}

TEST(SendLimits, ZeroOrNegativeMaxLengthIsNoLimit) {
  EXPECT_FALSE((send_limits{0, 0}.too_long(std::string(1'000'000, 'x'))));
  EXPECT_FALSE((send_limits{-1, 0}.too_long(std::string(1'000'000, 'x'))));
}

// rate limit -------------------------------------------------------------------------------------------------

TEST(SendLimits, ThirdSendInAMinuteIsRefused) {
  send_limits limits{0, 2};
  EXPECT_TRUE(limits.admit("c1", t0));
  EXPECT_TRUE(limits.admit("c1", t0 + 10));
  EXPECT_FALSE(limits.admit("c1", t0 + 20));
  EXPECT_FALSE(limits.admit("c1", t0 + minute - 1));
  // The first send leaves the window exactly 60 s later.
  EXPECT_TRUE(limits.admit("c1", t0 + minute));
  EXPECT_FALSE(limits.admit("c1", t0 + 10 + minute - 1));
  EXPECT_TRUE(limits.admit("c1", t0 + 10 + minute));
  EXPECT_FALSE(limits.admit("c1", t0 + 10 + minute));
}

// A reloaded build's chat changes the limits; the sends already counted in the window still count.
TEST(SendLimits, NewLimitsKeepTheSendsAlreadyCounted) {
  send_limits limits{5, 3};
  EXPECT_TRUE(limits.admit("c1", t0));
  EXPECT_TRUE(limits.admit("c1", t0 + 1));
  limits.set_limits(10, 2);
  EXPECT_FALSE(limits.admit("c1", t0 + 2));
  EXPECT_FALSE(limits.too_long("0123456789"));
  EXPECT_TRUE(limits.too_long("0123456789a"));
  limits.set_limits(0, 0);  // a build that dropped chat: no limits
  EXPECT_TRUE(limits.admit("c1", t0 + 3));
  EXPECT_FALSE(limits.too_long(std::string(100000, 'x')));
}

TEST(SendLimits, RefusedSendsAreNotRecorded) {
  send_limits limits{0, 1};
  EXPECT_TRUE(limits.admit("c1", t0));
  // Retrying throughout the minute does not push the window out.
  for (long long t = t0 + 1000; t < t0 + minute; t += 1000) EXPECT_FALSE(limits.admit("c1", t));
  EXPECT_TRUE(limits.admit("c1", t0 + minute));
}

TEST(SendLimits, ConversationsAreIndependent) {
  send_limits limits{0, 2};
  EXPECT_TRUE(limits.admit("c1", t0));
  EXPECT_TRUE(limits.admit("c1", t0));
  EXPECT_FALSE(limits.admit("c1", t0));
  EXPECT_TRUE(limits.admit("c2", t0));
  EXPECT_TRUE(limits.admit("c2", t0));
  EXPECT_FALSE(limits.admit("c2", t0));
  EXPECT_EQ(limits.size(), 2u);
}

TEST(SendLimits, ForgetGivesTheQuotaBack) {
  send_limits limits{0, 2};
  EXPECT_TRUE(limits.admit("c1", t0));
  EXPECT_TRUE(limits.admit("c1", t0 + 1000));
  limits.forget("c1", t0 + 1500);  // the second send failed retryably
  EXPECT_TRUE(limits.admit("c1", t0 + 2000));
  EXPECT_FALSE(limits.admit("c1", t0 + 3000));
  // Only the most recent admit was undone: the first still leaves at t0 + 60 s.
  EXPECT_FALSE(limits.admit("c1", t0 + minute - 1));
  EXPECT_TRUE(limits.admit("c1", t0 + minute));
}

TEST(SendLimits, ForgetOnlyUndoesAdmitsStillInTheWindow) {
  send_limits limits{0, 2};
  EXPECT_TRUE(limits.admit("c1", t0));
  limits.forget("c2", t0);  // unknown: nothing happens
  limits.forget("c1", t0 + minute);  // already out of the window: nothing to give back
  EXPECT_EQ(limits.size(), 0u);
  EXPECT_TRUE(limits.admit("c1", t0 + minute));
  EXPECT_TRUE(limits.admit("c1", t0 + minute));
  EXPECT_FALSE(limits.admit("c1", t0 + minute));
  limits.forget("c1", t0 + minute);
  limits.forget("c1", t0 + minute);
  limits.forget("c1", t0 + minute);  // more forgets than admits do not bank quota
  EXPECT_EQ(limits.size(), 0u);
  EXPECT_TRUE(limits.admit("c1", t0 + minute));
  EXPECT_TRUE(limits.admit("c1", t0 + minute));
  EXPECT_FALSE(limits.admit("c1", t0 + minute));
}

TEST(SendLimits, ZeroMaxPerMinuteAdmitsEverythingAndRemembersNothing) {
  send_limits limits{0, 0};
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limits.admit("c1", t0));
  EXPECT_EQ(limits.size(), 0u);
  limits.forget("c1", t0);
  EXPECT_TRUE(limits.admit("c1", t0));
}

// memory bound -----------------------------------------------------------------------------------------------

TEST(SendLimits, IdleConversationsAreDropped) {
  send_limits limits{0, 5};
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(limits.admit("conv" + std::to_string(i), t0 + i % 1000));
  EXPECT_EQ(limits.size(), 10'000u);
  EXPECT_TRUE(limits.admit("fresh", t0 + 61'000));
  EXPECT_EQ(limits.size(), 1u);
}

TEST(SendLimits, ConversationsStillInTheWindowSurviveTheSweep) {
  send_limits limits{0, 5};
  EXPECT_TRUE(limits.admit("old", t0));
  EXPECT_TRUE(limits.admit("recent", t0 + 30'000));
  EXPECT_TRUE(limits.admit("other", t0 + minute));  // sweeps: old leaves, recent stays
  EXPECT_EQ(limits.size(), 2u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(limits.admit("recent", t0 + minute));
  EXPECT_FALSE(limits.admit("recent", t0 + minute));  // its count survived the sweep
}

// the declared unit (chat.length_unit) -------------------------------------------------------------------------

TEST(SendLimits, LengthInEachUnit) {
  const std::string mixed = "a\xC3\xA9\xE4\xBD\xA0\xF0\x9F\x98\x80";  // a é 你 😀: 10 bytes, 4 code points
  EXPECT_EQ(length_in(length_unit::bytes, mixed), 10u);
  EXPECT_EQ(length_in(length_unit::characters, mixed), 4u);
  EXPECT_EQ(length_in(length_unit::utf16_units, mixed), 5u);  // 😀 is a surrogate pair
  // Invalid UTF-8 never counts past its bytes: a lone 4-byte lead, or one with too few continuation bytes, is one.
  for (const std::string bad : {"\xF0", "\xF0\x9F", "\xF0\xF0\xF0\xF0", "\x80\x80"}) {
    EXPECT_LE(length_in(length_unit::utf16_units, bad), bad.size()) << bad.size();
    EXPECT_LE(length_in(length_unit::characters, bad), bad.size()) << bad.size();
  }
  EXPECT_EQ(length_in(length_unit::utf16_units, "\xF0\x9F"), 1u);
}

TEST(SendLimits, TooLongCountsInTheDeclaredUnit) {
  const std::string four_e_acute = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";  // 8 bytes, 4 characters
  EXPECT_FALSE((send_limits{4, 0}.too_long(four_e_acute)));
  EXPECT_TRUE((send_limits{4, 0, length_unit::bytes}.too_long(four_e_acute)));
  EXPECT_FALSE((send_limits{8, 0, length_unit::bytes}.too_long(four_e_acute)));
  const std::string two_emoji = "\xF0\x9F\x98\x80\xF0\x9F\x98\x80";  // 8 bytes, 2 characters, 4 UTF-16 units
  EXPECT_FALSE((send_limits{2, 0}.too_long(two_emoji)));
  EXPECT_TRUE((send_limits{3, 0, length_unit::utf16_units}.too_long(two_emoji)));
  EXPECT_FALSE((send_limits{4, 0, length_unit::utf16_units}.too_long(two_emoji)));
  // A reload may change the unit: the next check uses it.
  send_limits limits{4, 0};
  EXPECT_FALSE(limits.too_long(four_e_acute));
  limits.set_limits(4, 0, length_unit::bytes);
  EXPECT_TRUE(limits.too_long(four_e_acute));
}

TEST(SendLimits, APluginThatPacesItselfIsNeverRateLimited) {
  // chat.max_per_minute 0 (IRC): twenty and more replies in one minute of one conversation all pass.
  send_limits limits{400, 0, length_unit::bytes};
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(limits.admit("irc-channel\nirc/group/#ops", t0 + i * 100)) << i;
  EXPECT_EQ(limits.size(), 0u);
}

}  // namespace
}  // namespace xconn
