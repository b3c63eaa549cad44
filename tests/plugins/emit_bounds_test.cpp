// What an adapter does so that the host takes its emits (plugins/kit/utf8_bound.hpp, adapter/emit_refusal.hpp) and the
// Telegram offset that survives an update_id of INT64_MAX (plugins/telegram/telegram_offset.hpp): a name cut to
// the host's 256 bytes between code points (ASCII, CJK, emoji, a cut that would fall inside one), invalid UTF-8 and
// control characters made valid, which refusals are final, and an offset that never overflows.
#include <xconn/adapter/emit_refusal.hpp>
#include "plugins/kit/utf8_bound.hpp"
#include "plugins/telegram/telegram_offset.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace {
using xconn::kit::emit_display_field;
using xconn::kit::utf8_bounded;

std::string times(std::string_view piece, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += piece;
  return out;
}

// Well-formed by the kit's own reading: every byte belongs to a sequence it accepts.
bool well_formed(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto n = xconn::kit::utf8_sequence_bytes(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

constexpr std::string_view cjk = "\xE5\xAD\x97";          // U+5B57, 3 bytes
constexpr std::string_view emoji = "\xF0\x9F\x98\x80";    // U+1F600, 4 bytes
constexpr std::string_view fffd = "\xEF\xBF\xBD";

TEST(utf8_bounded, short_text_is_kept_whole_and_ascii_is_cut_at_the_bound) {
  EXPECT_EQ(emit_display_field("Ann Lee"), "Ann Lee");
  EXPECT_EQ(emit_display_field(""), "");
  EXPECT_EQ(emit_display_field(std::string(256, 'a')), std::string(256, 'a'));
  EXPECT_EQ(emit_display_field(std::string(257, 'a')), std::string(256, 'a'));
  EXPECT_EQ(utf8_bounded("abcdef", 0), "");
}

TEST(utf8_bounded, sixty_four_plus_sixty_four_cjk_characters_are_cut_to_85_whole_ones) {
  // Telegram's first and last name, 64 characters each, joined by a space: 385 bytes.
  auto name = times(cjk, 64) + " " + times(cjk, 64);
  auto cut = emit_display_field(name);
  EXPECT_LE(cut.size(), 256u);
  EXPECT_EQ(cut, times(cjk, 64) + " " + times(cjk, 21));  // 192 + 1 + 63 = 256 bytes
  EXPECT_TRUE(well_formed(cut));
  EXPECT_TRUE(name.starts_with(cut));
}

TEST(utf8_bounded, emoji_are_kept_whole_or_not_at_all) {
  auto name = times(emoji, 32) + " " + times(emoji, 32);  // 257 bytes
  auto cut = emit_display_field(name);
  EXPECT_EQ(cut, times(emoji, 32) + " " + times(emoji, 31));  // 128 + 1 + 124 = 253: the 32nd does not fit
  EXPECT_TRUE(well_formed(cut));
  // Every bound that falls inside a code point cuts before it.
  for (std::size_t bound = 0; bound < 12; ++bound) {
    auto part = utf8_bounded(times(emoji, 3), bound);
    EXPECT_EQ(part.size(), bound / 4 * 4) << bound;
    EXPECT_TRUE(well_formed(part)) << bound;
  }
  for (std::size_t bound = 0; bound < 9; ++bound)
    EXPECT_EQ(utf8_bounded("a" + times(cjk, 2) + "b", bound).size(), bound < 1 ? 0 : bound < 4 ? 1 : bound < 7 ? 4 : bound < 8 ? 7 : 8)
        << bound;
}

TEST(utf8_bounded, invalid_utf8_becomes_replacement_characters_within_the_bound) {
  // A stray continuation byte, a lead cut short at the end, an overlong '/', a surrogate, a code point past
  // U+10FFFF, and Latin-1: each byte that starts no well-formed sequence is one U+FFFD.
  EXPECT_EQ(utf8_bounded("a\x80" "b", 10), "a" + std::string(fffd) + "b");
  EXPECT_EQ(utf8_bounded("ab\xE5\xAD", 10), "ab" + std::string(fffd) + std::string(fffd));
  EXPECT_EQ(utf8_bounded("\xC0\xAF", 10), std::string(fffd) + std::string(fffd));
  EXPECT_EQ(utf8_bounded("\xED\xA0\x80", 10), times(fffd, 3));
  EXPECT_EQ(utf8_bounded("\xF4\x90\x80\x80", 20), times(fffd, 4));
  EXPECT_EQ(utf8_bounded("caf\xE9", 10), "caf" + std::string(fffd));
  // A replacement that does not fit is not cut either.
  EXPECT_EQ(utf8_bounded("ab\xFF", 4), "ab");
  std::string hostile;
  for (int i = 0; i < 1000; ++i) hostile += static_cast<char>(i * 37 % 256);
  auto cut = emit_display_field(hostile);
  EXPECT_LE(cut.size(), 256u);
  EXPECT_TRUE(well_formed(cut));
  for (unsigned char c : cut) EXPECT_FALSE(c < 0x20 || c == 0x7F);
}

TEST(utf8_bounded, control_characters_become_spaces_in_a_display_field) {
  EXPECT_EQ(emit_display_field("Ann\nLee\t\x7F!"), "Ann Lee  !");
  EXPECT_EQ(utf8_bounded("Ann\nLee", 10), "Ann\nLee");  // only a display field asks for printable text
}

TEST(emit_refusal, only_an_invalid_message_or_a_gone_channel_is_final) {
  EXPECT_TRUE(xconn::adapter::emit_refused_for_good("invalid_message"));
  EXPECT_TRUE(xconn::adapter::emit_refused_for_good("channel_not_found"));
  EXPECT_FALSE(xconn::adapter::emit_refused_for_good("store_failed"));
  EXPECT_FALSE(xconn::adapter::emit_refused_for_good("kv_quota_exceeded"));
  EXPECT_FALSE(xconn::adapter::emit_refused_for_good(""));
}

TEST(emit_refusal, a_tally_names_the_count_at_powers_of_two_only) {
  xconn::adapter::refusal_tally tally;
  std::vector<std::uint64_t> logged;
  for (int i = 0; i < 1000; ++i)
    if (auto n = tally.count()) logged.push_back(n);
  EXPECT_EQ(logged, (std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
}

TEST(update_offset, moves_past_each_update_and_saturates_at_int64_max) {
  using telegram::update_offset;
  constexpr long long top = std::numeric_limits<long long>::max();
  auto o = update_offset::from_kept("");
  EXPECT_EQ(o.next(), 0);
  EXPECT_FALSE(o.handled(1));
  o = o.after(7);
  EXPECT_EQ(o.next(), 8);
  EXPECT_TRUE(o.handled(7));
  EXPECT_EQ(o.after(3).next(), 8);  // never backwards
  o = o.after(top - 1);
  EXPECT_EQ(o.next(), top);
  EXPECT_FALSE(o.handled(top));
  o = o.after(top);  // id + 1 would overflow: the offset stays at INT64_MAX and that id counts as handled
  EXPECT_EQ(o.next(), top);
  EXPECT_TRUE(o.handled(top));
  EXPECT_EQ(o.after(top), o);
  EXPECT_EQ(o.kept(), std::to_string(top));
  // Read back after a restart, INT64_MAX is handled once more (the host drops the repeat by its msg_id).
  auto restarted = update_offset::from_kept(o.kept());
  EXPECT_EQ(restarted.next(), top);
  EXPECT_FALSE(restarted.handled(top));
  auto rewound = update_offset::rewound_to(top);
  EXPECT_FALSE(rewound.handled(top));
}

TEST(update_offset, an_unreadable_kept_offset_starts_from_what_telegram_still_holds) {
  using telegram::update_offset;
  for (const char* kept : {"", "x", "12x", "-5", "99999999999999999999", " 12"})
    EXPECT_EQ(update_offset::from_kept(kept).next(), 0) << kept;
  EXPECT_EQ(update_offset::from_kept("12").next(), 12);
}

}  // namespace
