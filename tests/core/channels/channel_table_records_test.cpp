// What LMDB keeps of a channel: the record round trip, what it never holds, and malformed records refused.
#include "core/channels/channel_table.hpp"

#include "support/channel_table_fixture.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

// records ----------------------------------------------------------------------------------------------------

TEST_F(ChannelTable, RecordRoundTrip) {
  auto id = open_new();
  auto binding = json::object{{"display_name", "Alice"}, {"account_hint", "a***@x"},
                              {"tools", json::array{json::object{{"tool_id", "t"}, {"status", "available"}}}}};
  auto c = table.authenticate(id, binding);
  ASSERT_TRUE(c);
  auto text = json::serialize(c->to_record());
  auto back = channel::from_record(id, text);
  ASSERT_TRUE(back) << text;
  EXPECT_EQ(back->id, id);
  EXPECT_EQ(back->plugin_id, "echo");
  EXPECT_EQ(back->owner, "conn_a");
  EXPECT_TRUE(back->authenticated);
  EXPECT_TRUE(back->persistent);
  EXPECT_EQ(back->binding, binding);
  EXPECT_EQ(back->created_at, c->created_at);
  EXPECT_TRUE(back->route.expired());
}

TEST_F(ChannelTable, RecordHoldsNoRouteNoClockAndNoBindingWhenSignedOut) {
  auto id = open_new();
  ASSERT_TRUE(table.authenticate(id, json::object{{"display_name", "Alice"}}));
  auto c = table.logout(id);
  ASSERT_TRUE(c);
  auto r = c->to_record();
  EXPECT_FALSE(r.contains("binding"));
  EXPECT_FALSE(r.contains("route"));
  EXPECT_FALSE(r.contains("last_used"));
  auto back = channel::from_record(id, json::serialize(r));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->authenticated);
  EXPECT_TRUE(back->persistent);  // a record exists only for a persistent channel
  EXPECT_TRUE(back->binding.empty());
}

TEST_F(ChannelTable, TheReportedStatusIsKeptOnlyWhileSignedInAndOnlyForItsPlugin) {
  auto id = open_new();
  EXPECT_FALSE(table.set_target_status(id, "echo", "revoked", std::nullopt));  // not signed in
  ASSERT_TRUE(table.authenticate(id, json::object{{"display_name", "Alice"}}));
  EXPECT_FALSE(table.set_target_status(id, "other", "revoked", std::nullopt));
  auto tools = json::array{json::object{{"tool_id", "t"}, {"status", "unavailable"}}};
  auto c = table.set_target_status(id, "echo", "revoked", tools);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->binding_lost());
  EXPECT_EQ(c->binding.at("tools"), tools);
  auto back = channel::from_record(id, json::serialize(c->to_record()));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target_status, "revoked");
  // A status a plugin may not give is not read back from a record.
  auto forged = c->to_record();
  forged["target_status"] = "created";
  EXPECT_EQ(channel::from_record(id, json::serialize(forged))->target_status, "");
  // A new sign-in, or a sign-out, clears it.
  EXPECT_EQ(table.authenticate(id, json::object{{"display_name", "Alice"}})->target_status, "");
  ASSERT_TRUE(table.set_target_status(id, "echo", "expired", std::nullopt));
  auto out = table.logout(id);
  EXPECT_EQ(out->target_status, "");
  EXPECT_FALSE(out->to_record().contains("target_status"));
}

TEST(ChannelRecord, RefusesMalformedRecords) {
  const char* bad[] = {
      "",
      "not json",
      "[]",
      "\"x\"",
      "null",
      "{",
      R"({"owner":"conn_a","authenticated":true})",                     // no plugin_id
      R"({"plugin_id":"echo","authenticated":true})",                   // no owner
      R"({"plugin_id":"echo","owner":"conn_a"})",                       // no authenticated
      R"({"plugin_id":7,"owner":"conn_a","authenticated":true})",       // wrong types
      R"({"plugin_id":"echo","owner":null,"authenticated":true})",
      R"({"plugin_id":"echo","owner":"conn_a","authenticated":"yes"})",
  };
  for (auto* text : bad) EXPECT_FALSE(channel::from_record("cch_x", text)) << text;
  auto ok = channel::from_record("cch_x", R"({"plugin_id":"echo","owner":"conn_a","authenticated":false})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->created_at, 0);
}

TEST_F(ChannelTable, RestoredRecordBehavesLikeAPersistentChannel) {
  auto c = channel::from_record("cch_restoredrestoredrestor",
                                R"({"plugin_id":"echo","owner":"conn_a","authenticated":false,"created_at":5})");
  ASSERT_TRUE(c);
  table.restore(*c);
  clock.now += 24h * 30;
  EXPECT_TRUE(table.expire().empty());
  EXPECT_TRUE(present("cch_restoredrestoredrestor"));
}

}  // namespace
}  // namespace xconn::test
