// A restored irc channel whose nick a ghost still holds (a client of our own nick, left over), on the real server
// against Debian's ngircd on loopback: the restore answers degraded with the reason nick_in_use (not
// target_unreachable, not revoked: the nick is ours, only taken for now), and once the ghost quits the connection
// takes the nick by itself and the channel turns connected (docs/irc.md "Restore").
#include "support/irc_outage_fixture.hpp"
#include "support/irc_test_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace xconn::test {
namespace irc_ghost_nick_cases {
using namespace std::chrono_literals;

class irc_ghost_nick : public irc_outage_fixture {};

TEST_F(irc_ghost_nick, a_channel_restored_while_a_ghost_holds_its_nick_is_degraded_nick_in_use_then_connected) {
  auto channel = bound("xbot", "#ops");
  ASSERT_FALSE(channel.empty());
  std::unique_ptr<irc_test_client> ghost;
  restart_during(channel, [&] {
    ghost = std::make_unique<irc_test_client>(ircd.port(), "xbot", irc_outage_password);
    ASSERT_TRUE(ghost->registered()) << "xconn's connection let go of the nick when it stopped";
  });
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 20s)) << status_of(channel);
  EXPECT_EQ(listed_reason(channel), "nick_in_use");
  ghost.reset();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 70s)) << status_of(channel);
  EXPECT_EQ(listed_reason(channel), "");
}

}  // namespace irc_ghost_nick_cases
}  // namespace xconn::test
