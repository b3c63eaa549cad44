// connector_id offline leases on a hand-driven clock: start, cancel, expiry, several sockets on one id, and
// what a restart keeps (seed 000 "Connector Server offline lease").
#include "core/channels/connector_leases.hpp"

#include <gtest/gtest.h>

namespace xconn {
namespace {

constexpr long long t0 = 1790000000000;
constexpr long long lease = 3600000;

TEST(connector_leases, the_lease_starts_when_the_last_socket_closes_and_a_hello_cancels_it) {
  connector_leases l(lease);
  EXPECT_FALSE(l.hello("conn_a"));
  EXPECT_FALSE(l.hello("conn_a"));  // a second socket on the same id
  EXPECT_FALSE(l.socket_closed("conn_a", t0)) << "one socket still holds it";
  EXPECT_EQ(l.socket_closed("conn_a", t0 + 10), t0 + 10 + lease);
  EXPECT_TRUE(l.expire(t0 + 10 + lease - 1).empty());
  EXPECT_TRUE(l.hello("conn_a")) << "back within the lease";
  EXPECT_FALSE(l.deadline("conn_a"));
  EXPECT_TRUE(l.expire(t0 + 10 * lease).empty());
}

TEST(connector_leases, it_expires_exactly_at_the_deadline_and_is_forgotten) {
  connector_leases l(lease);
  l.hello("conn_a");
  l.hello("conn_b");
  l.socket_closed("conn_a", t0);
  l.socket_closed("conn_b", t0 + 5);
  EXPECT_EQ(l.expire(t0 + lease), std::vector<std::string>{"conn_a"});
  EXPECT_EQ(l.expire(t0 + lease + 5), std::vector<std::string>{"conn_b"});
  EXPECT_EQ(l.leased(), 0u);
  EXPECT_TRUE(l.expire(t0 + 2 * lease).empty()) << "once";
}

TEST(connector_leases, a_restart_keeps_a_recorded_deadline_and_gives_the_others_one_from_now) {
  connector_leases l(lease);
  l.restore("conn_old", t0 + 100);
  EXPECT_FALSE(l.start_grace("conn_old", t0 + 50)) << "never reset";
  EXPECT_EQ(l.start_grace("conn_new", t0 + 50), t0 + 50 + lease);
  EXPECT_EQ(l.expire(t0 + 100), std::vector<std::string>{"conn_old"});
  EXPECT_TRUE(l.hello("conn_new")) << "a hello within the grace keeps it";
  EXPECT_TRUE(l.expire(t0 + 10 * lease).empty());
}

TEST(connector_leases, a_socket_holding_the_id_outlives_a_stale_deadline) {
  connector_leases l(lease);
  l.restore("conn_a", t0);
  l.hello("conn_a");
  l.restore("conn_a", t0);  // a late write of an older deadline
  EXPECT_TRUE(l.expire(t0 + lease).empty());
  EXPECT_EQ(l.sockets("conn_a"), 1u);
}

TEST(connector_leases, a_close_without_a_hello_is_ignored) {
  connector_leases l(lease);
  EXPECT_FALSE(l.socket_closed("conn_never", t0));
  EXPECT_EQ(l.leased(), 0u);
}

}  // namespace
}  // namespace xconn
