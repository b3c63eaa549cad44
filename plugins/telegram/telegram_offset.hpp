// The getUpdates offset of one bot (Bot API "getUpdates"): an update is confirmed by asking from its update_id + 1.
// Telegram's update ids are positive and fit in 32 bits in practice, but the plugin reads any int64 the server
// sends: an id of INT64_MAX has no next offset, so the offset stays at INT64_MAX (saturated) and that update,
// which the server keeps sending because it was never confirmed, is handled once and then skipped as a repeat.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace telegram {

class update_offset {
 public:
  static constexpr long long max_id = std::numeric_limits<long long>::max();

  // The offset kept in the key-value store ("" or anything unreadable: 0, every update Telegram still holds).
  static update_offset from_kept(std::string_view kept) {
    update_offset o;
    long long value = 0;
    auto [end, ec] = std::from_chars(kept.data(), kept.data() + kept.size(), value);
    if (ec == std::errc() && end == kept.data() + kept.size() && value > 0) o.next_ = value;
    return o;
  }

  long long next() const { return next_; }
  std::string kept() const { return std::to_string(next_); }

  // Whether id was handled already: below the offset (a server repeating what was confirmed), or the saturated
  // INT64_MAX.
  bool handled(long long id) const { return id < next_ || (saturated_ && id == max_id); }

  // The offset after handling id (never smaller than this one's).
  update_offset after(long long id) const {
    update_offset o = *this;
    if (id == max_id) {
      o.next_ = max_id;
      o.saturated_ = true;
    } else if (id + 1 > o.next_) {
      o.next_ = id + 1;
    }
    return o;
  }

  // Asks again from id (the first update that was not stored): nothing at or after it counts as handled.
  static update_offset rewound_to(long long id) {
    update_offset o;
    o.next_ = id;
    return o;
  }

  bool operator==(const update_offset&) const = default;

 private:
  long long next_ = 0;
  bool saturated_ = false;  // the update INT64_MAX was handled
};

}  // namespace telegram
