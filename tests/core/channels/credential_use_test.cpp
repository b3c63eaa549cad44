// When the host may act on a channel's credential (a reply, a tool): a dead credential is refused for good, an
// unreachable or unconfirmed target for now, and a degraded one not at all.
#include "core/channels/credential_use.hpp"

#include <gtest/gtest.h>

namespace xconn {
namespace {

channel signed_in(std::string target_status = "", bool verifying = false) {
  channel c;
  c.id = "ch_1";
  c.plugin_id = "echo";
  c.authenticated = true;
  c.persistent = true;
  c.target_status = std::move(target_status);
  c.verifying = verifying;
  return c;
}

TEST(credential_use, a_connected_or_degraded_channel_may_use_its_credential) {
  EXPECT_FALSE(credential_refusal(signed_in()));
  EXPECT_FALSE(credential_refusal(signed_in("degraded")))
      << "degraded still takes what it can, and a plugin learns of its recovery only by trying";
}

TEST(credential_use, an_expired_or_revoked_credential_is_refused_for_good_as_tools_are) {
  for (const char* lost : {"expired", "revoked"}) {
    auto no = credential_refusal(signed_in(lost));
    ASSERT_TRUE(no) << lost;
    EXPECT_EQ(no->code, "connection_not_authenticated") << lost;
    EXPECT_FALSE(no->retryable) << lost << ": only a new sign-in helps";
  }
  channel never;
  never.id = "ch_2";
  auto no = credential_refusal(never);
  ASSERT_TRUE(no);
  EXPECT_EQ(no->code, "connection_not_authenticated");
  EXPECT_FALSE(no->retryable);
}

TEST(credential_use, an_unreachable_or_unconfirmed_target_is_refused_retryable) {
  for (const char* down : {"offline", "error"}) {
    auto no = credential_refusal(signed_in(down));
    ASSERT_TRUE(no) << down;
    EXPECT_EQ(no->code, "connector_channel_unavailable") << down;
    EXPECT_TRUE(no->retryable) << down;
  }
  auto verifying = credential_refusal(signed_in("", true));
  ASSERT_TRUE(verifying);
  EXPECT_TRUE(verifying->retryable) << "restored and not yet confirmed by its plugin";
}

}  // namespace
}  // namespace xconn
