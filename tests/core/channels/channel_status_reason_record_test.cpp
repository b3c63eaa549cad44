// The plugin's reason for a channel's status is kept in the channel's record beside the status (so a restart
// still shows it until the restore's answer replaces it), cleared by "connected", and only [a-z_]{1,64} is a reason.
#include "core/channels/channel_table.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace xconn {
namespace {

TEST(channel_status_reason, kept_in_the_record_with_its_status_and_cleared_by_connected) {
  channel c;
  c.authenticated = true;
  c.plugin_id = "irc";
  c.owner = "conn";
  c.target_status = "degraded";
  c.target_reason = "target_unreachable";
  auto back = channel::from_record("cch_1", boost::json::serialize(c.to_record()));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target_status, "degraded");
  EXPECT_EQ(back->target_reason, "target_unreachable");

  c.target_status.clear();  // connected: no word of the plugin, so no reason either
  EXPECT_FALSE(c.to_record().contains("target_reason"));
}

TEST(channel_status_reason, only_short_lowercase_codes_are_reasons) {
  EXPECT_TRUE(is_status_reason("target_unreachable"));
  EXPECT_TRUE(is_status_reason(std::string(64, 'a')));
  EXPECT_FALSE(is_status_reason(std::string(65, 'a')));
  EXPECT_FALSE(is_status_reason(""));
  EXPECT_FALSE(is_status_reason("Target"));
  EXPECT_FALSE(is_status_reason("rate-limited"));
  EXPECT_FALSE(is_status_reason("a b"));
  EXPECT_FALSE(is_status_reason("x1"));
}

}  // namespace
}  // namespace xconn
