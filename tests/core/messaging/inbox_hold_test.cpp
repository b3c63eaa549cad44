// A queue whose socket is full (server.max_outbox_bytes) on a hand-driven clock: a message taken one at a time and
// handed back waits first in line as if never sent, and what the queue keeps in memory has no bodies.
#include "core/messaging/inbox.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace xconn {
namespace {

constexpr long long hold_t0 = 1790000000000;

channel_inbox held_inbox(std::size_t window = 4) { return channel_inbox(inbox_policy{1000, 8000, window, 100}); }

std::uint64_t add_held(channel_inbox& box, const std::string& text, bool trigger = true) {
  inbound_message m;
  m.seq = box.next_seq();
  m.message_id = "msg_" + text;
  m.text = text;
  m.trigger = trigger;
  m.accepted_at = hold_t0;
  m.expires_at = hold_t0 + 3600000;
  auto seq = m.seq;
  box.add(std::move(m));
  box.mark_durable(seq);
  return seq;
}

TEST(inbox_hold, takes_one_at_a_time_and_an_untaken_message_is_next_again_as_if_never_sent) {
  auto box = held_inbox();
  auto a = add_held(box, "a");
  auto b = add_held(box, "b");
  add_held(box, "c");
  auto first = box.take_sendable(hold_t0, 1);
  ASSERT_EQ(first.send, std::vector<std::uint64_t>{a});
  EXPECT_EQ(box.in_flight(), 1u);
  box.untake(a);  // the socket refused it
  EXPECT_EQ(box.in_flight(), 0u);
  EXPECT_EQ(box.attempts(a), 0) << "a message the socket never took was not transmitted";
  EXPECT_FALSE(box.check_timeouts(hold_t0 + 5000)) << "nothing in flight: no ack is awaited, no backoff";
  EXPECT_EQ(box.take_sendable(hold_t0 + 5000, 1).send, std::vector<std::uint64_t>{a}) << "first in line again";
  EXPECT_EQ(box.attempts(a), 1);
  EXPECT_EQ(box.take_sendable(hold_t0 + 5000, 1).send, std::vector<std::uint64_t>{b});
  EXPECT_EQ(box.in_flight(), 2u);
}

TEST(inbox_hold, untake_of_a_message_not_in_flight_or_unknown_changes_nothing) {
  auto box = held_inbox();
  auto a = add_held(box, "a");
  box.untake(a);
  box.untake(999);
  EXPECT_EQ(box.in_flight(), 0u);
  EXPECT_EQ(box.attempts(a), 0);
  box.take_sendable(hold_t0);
  box.untake(a);
  box.untake(a);  // twice: counted once
  EXPECT_EQ(box.in_flight(), 0u);
  EXPECT_EQ(box.take_sendable(hold_t0).send, std::vector<std::uint64_t>{a});
  EXPECT_EQ(box.in_flight(), 1u);
}

TEST(inbox_hold, the_window_still_bounds_what_one_at_a_time_takes_and_context_still_rides_along) {
  auto box = held_inbox(2);
  auto ctx = add_held(box, "ctx", false);
  auto a = add_held(box, "a");
  auto b = add_held(box, "b");
  add_held(box, "c");
  EXPECT_EQ(box.take_sendable(hold_t0, 1).send, std::vector<std::uint64_t>{a});
  box.untake(a);
  EXPECT_EQ(box.take_sendable(hold_t0, 1).send, std::vector<std::uint64_t>{a});
  auto context = box.context_of(a);
  ASSERT_EQ(context.size(), 1u);
  EXPECT_EQ(context[0]->seq, ctx);
  EXPECT_EQ(box.take_sendable(hold_t0, 1).send, std::vector<std::uint64_t>{b});
  EXPECT_TRUE(box.take_sendable(hold_t0, 1).send.empty()) << "the window of 2 is full";
  // Acked after a hold: the group leaves as usual and the window has room for the next.
  EXPECT_EQ(box.ack("msg_a", ack_status::accepted, false, hold_t0).size(), 2u);
  EXPECT_EQ(box.take_sendable(hold_t0, 1).send.size(), 1u);
}

TEST(inbox_hold, an_expired_message_met_by_a_one_at_a_time_walk_still_leaves) {
  auto box = held_inbox();
  add_held(box, "old");
  auto late = hold_t0 + 3600000;
  auto s = box.take_sendable(late, 1);
  EXPECT_TRUE(s.send.empty());
  ASSERT_EQ(s.expired.size(), 1u);
  EXPECT_EQ(box.size(), 0u);
}

TEST(inbox_hold, the_index_keeps_ids_order_expiry_and_origin_but_no_bodies) {
  inbound_message m;
  m.seq = 7;
  m.message_id = "msg_x";
  m.msg_id = "p-1";
  m.text = std::string(60000, 't');
  m.context_text = std::string(1000, 'c');
  m.channel_key = "echo/dm/1";
  m.sender_id = "u1";
  m.sender_name = "U \"one\"";
  m.role = "user";
  m.trigger = false;
  m.accepted_at = hold_t0;
  m.expires_at = hold_t0 + 10;
  m.files.push_back(boost::json::object{{"file_ref", "f1"}, {"type", "image"}});
  auto record = m.to_record();

  auto index = inbound_message::from_record(7, record, false);
  ASSERT_TRUE(index);
  EXPECT_EQ(index->message_id, "msg_x");
  EXPECT_EQ(index->msg_id, "p-1");
  EXPECT_EQ(index->channel_key, "echo/dm/1");
  EXPECT_EQ(index->sender_name, "U \"one\"");
  EXPECT_FALSE(index->trigger);
  EXPECT_EQ(index->expires_at, hold_t0 + 10);
  EXPECT_TRUE(index->text.empty());
  EXPECT_TRUE(index->context_text.empty());
  EXPECT_TRUE(index->files.empty());

  auto full = inbound_message::from_record(7, record);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->text, m.text);
  EXPECT_EQ(full->context_text, m.context_text);
  EXPECT_EQ(full->files.size(), 1u);

  m.drop_body();
  EXPECT_TRUE(m.text.empty());
  EXPECT_EQ(m.text.capacity(), std::string().capacity()) << "the memory is given back, not just emptied";
  EXPECT_TRUE(m.files.empty());
  EXPECT_EQ(m.message_id, "msg_x");
  // The index is read from the record's first bytes: cut just after the bodies' key, it still reads.
  auto cut = record.find(R"(,"text":)");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_LT(cut, 200u) << "the index fields come before the bodies";
  auto head_only = inbound_message::from_record(7, std::string_view(record).substr(0, cut + 9), false);
  ASSERT_TRUE(head_only);
  EXPECT_EQ(head_only->message_id, "msg_x");
  EXPECT_EQ(head_only->expires_at, hold_t0 + 10);
  EXPECT_EQ(head_only->sender_name, "U \"one\"");
  // A record written before the bodies went last (text second) is read whole, its index intact.
  auto old_layout = std::string(R"({"message_id":"msg_o","text":"t ,\"text\": x","accepted_at":5,"expires_at":9,)") +
                    R"("msg_id":"p-2","trigger":false})";
  auto old_index = inbound_message::from_record(8, old_layout, false);
  ASSERT_TRUE(old_index);
  EXPECT_EQ(old_index->expires_at, 9);
  EXPECT_EQ(old_index->msg_id, "p-2");
  EXPECT_FALSE(old_index->trigger);
  EXPECT_TRUE(old_index->text.empty());
  EXPECT_EQ(inbound_message::from_record(8, old_layout)->text, "t ,\"text\": x");
  // Hostile records are refused whether or not the body is read.
  EXPECT_FALSE(inbound_message::from_record(7, "{\"text\":\"no id\"}", false));
  EXPECT_FALSE(inbound_message::from_record(7, "[1,2", false));
  EXPECT_FALSE(inbound_message::from_record(7, "", false));
  // Bodies cut short: the index still loads, the send's whole read refuses it (the message is dropped then).
  const std::string cut_short = R"({"message_id":"m","expires_at":1,"text":"unterminated)";
  EXPECT_TRUE(inbound_message::from_record(7, cut_short, false));
  EXPECT_FALSE(inbound_message::from_record(7, cut_short));
  EXPECT_FALSE(inbound_message::from_record(7, R"({"expires_at":1,"text":"no id"})", false));
}

}  // namespace
}  // namespace xconn
