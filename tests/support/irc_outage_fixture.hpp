// The fixture of the irc plugin's outage tests (integration/irc_outage_test, irc_ghost_nick_test): the real server
// with irc.so, Debian's ngircd on loopback asking a server password, channels signed in with it, a restart of xconn
// while something happens to ngircd, and the refusal a reply gets while the server is away.
#pragma once

#include "support/adapter_channel_fixture.hpp"
#include "support/ngircd_server.hpp"

#include <string>

namespace xconn::test {

inline const std::string irc_outage_password = "planted-outage-pass-7d2a";

class irc_outage_fixture : public adapter_channel_fixture {
 protected:
  irc_outage_fixture()
      : adapter_channel_fixture("irc", [](config& c) { c.connectors["irc"].config = boost::json::object{}; }),
        ircd(irc_outage_password) {}

  std::string bound(const std::string& nick, const std::string& target) {
    return dp->open_signed_in("irc_login", {{"server", ircd.address()}, {"nick", nick}, {"target", target},
                                            {"password", irc_outage_password}});
  }
  // Stops xconn, lets `outage` happen to ngircd, starts xconn again on the same store and opens channel.
  template <class Outage>
  void restart_during(const std::string& channel, Outage outage) {
    restart({channel}, outage);
  }
  using adapter_channel_fixture::reply;
  boost::json::object reply(const std::string& channel, const std::string& message_id) {
    return reply(channel, message_id, "anyone there?");
  }
  // The replies refused while the server is away: retryable, never a sign-in matter.
  void expect_refused_retryable(const std::string& channel, const std::string& message_id) {
    auto p = reply(channel, message_id);
    EXPECT_EQ(text_of(p, "status"), "rejected") << boost::json::serialize(p);
    EXPECT_EQ(text_of(p, "code"), "target_unreachable") << boost::json::serialize(p);
    EXPECT_EQ(p.if_contains("retryable") ? p.at("retryable") : boost::json::value(), boost::json::value(true))
        << boost::json::serialize(p);
  }

  ngircd_server ircd;
};

}  // namespace xconn::test
