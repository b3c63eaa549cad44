// The health board: one health made of several sources, the host told only of changes.
#include "recording_host.hpp"

#include <xconn/adapter/health_board.hpp>

#include <gtest/gtest.h>

namespace {

using xconn::adapter_test::recording_host;

TEST(health_board, stays_degraded_while_any_source_has_a_trouble) {
  recording_host host;
  xconn::adapter::health_board board(host.host());
  board.set("poller a", "telegram_unreachable");
  board.set("poller b", "telegram_conflict");
  board.set("poller b", "telegram_conflict");  // no change: not told again
  board.set("poller b", "");                   // a's outage still shows
  board.set("poller a", "");
  board.set("poller a", "");
  EXPECT_EQ(host.health_, (std::vector<std::string>{"degraded:telegram_unreachable", "degraded:telegram_conflict",
                                                    "degraded:telegram_unreachable", "healthy:"}));
}

}  // namespace
