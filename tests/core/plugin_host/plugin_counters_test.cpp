// A plugin's own counters: names of [a-z0-9_] up to 48 bytes, at most 64 of them, added from many threads.
#include "core/plugin_host/plugin_counters.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace xconn {
namespace {

TEST(PluginCounters, NamesAreCheckedAndBoundedAndAddsFromManyThreadsAllCount) {
  plugin_counters c;
  EXPECT_TRUE(c.add("polls", 1));
  EXPECT_TRUE(c.add("errors_429", 2));
  for (const char* bad : {"", "Polls", "with space", "a\"b", "new\nline", "x{y}"}) EXPECT_FALSE(c.add(bad, 1)) << bad;
  EXPECT_FALSE(c.add(std::string(49, 'a'), 1));
  EXPECT_TRUE(c.add(std::string(48, 'a'), 1));
  for (int i = 0; c.snapshot().size() < plugin_counters::max_names; ++i) ASSERT_TRUE(c.add("n" + std::to_string(i), 1));
  EXPECT_FALSE(c.add("one_too_many", 1));
  EXPECT_TRUE(c.add("polls", 1)) << "a known name still counts";
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) c.add("polls", 1);
    });
  for (auto& t : threads) t.join();
  for (const auto& [name, value] : c.snapshot()) {
    if (name == "polls") {
      EXPECT_EQ(value, 4002u);
    }
  }
}

}  // namespace
}  // namespace xconn
