// unrepeatable_emits against the recording host: each emit keeps its slot until the host answered, and refusals are
// logged at the 1st and 2nd (and 4th, ...) only, with the code and never the message's text.
#include "recording_host.hpp"

#include <xconn/adapter/unrepeatable_emits.hpp>

#include <gtest/gtest.h>

namespace {

using xconn::adapter::unrepeatable_emits;
using xconn::adapter_test::recording_host;

TEST(unrepeatable_emits, keeps_the_slot_until_the_host_answered) {
  recording_host host;
  unrepeatable_emits emits(host.host(), "feed: ");
  auto slot = std::make_shared<int>(0);
  std::weak_ptr<int> held = slot;
  emits.emit("c1", R"({"text":"secret words"})", std::move(slot));
  EXPECT_FALSE(held.expired());  // the host has not answered yet
  ASSERT_TRUE(host.answer_next(true));
  EXPECT_TRUE(held.expired());
  EXPECT_TRUE(host.read([](recording_host& h) { return h.logs_.empty(); }));
}

TEST(unrepeatable_emits, logs_refusals_at_the_first_second_and_fourth_without_the_text) {
  recording_host host;
  unrepeatable_emits emits(host.host(), "feed: ");
  for (int i = 0; i < 4; ++i) {
    emits.emit("c1", R"({"text":"secret words"})", nullptr);
    ASSERT_TRUE(host.answer_next(false));  // store_failed: not stored
  }
  auto logs = host.read([](recording_host& h) { return h.logs_; });
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0], "feed: 1 message(s) not stored (last: store_failed)");
  EXPECT_EQ(logs[1], "feed: 2 message(s) not stored (last: store_failed)");
  EXPECT_EQ(logs[2], "feed: 4 message(s) not stored (last: store_failed)");
}

}  // namespace
