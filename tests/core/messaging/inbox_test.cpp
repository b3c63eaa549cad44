// One channel's inbound queue on a hand-driven clock: order, the window, redelivery and its backoff, acks,
// context groups, the cap, expiry that restarts never extend, and the msg_id window across a reload.
#include "core/messaging/emit_message.hpp"
#include "core/messaging/inbox.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace xconn {
namespace {

constexpr long long t0 = 1790000000000;
constexpr long long expiry = 3600000;

inbox_policy policy(std::size_t window = 2, std::size_t capacity = 5) {
  return inbox_policy{1000, 8000, window, capacity};
}

class inbox_test : public ::testing::Test {
 protected:
  // Adds a durable message accepted at `at`.
  std::uint64_t add(channel_inbox& box, std::string text, bool trigger = true, long long at = t0) {
    inbound_message m;
    m.seq = box.next_seq();
    m.message_id = "msg_" + text;
    m.text = std::move(text);
    m.trigger = trigger;
    m.accepted_at = at;
    m.expires_at = at + expiry;
    auto seq = m.seq;
    box.add(std::move(m));
    box.mark_durable(seq);
    return seq;
  }
  std::vector<std::string> texts(channel_inbox& box, const std::vector<std::uint64_t>& seqs) {
    std::vector<std::string> out;
    for (auto s : seqs) out.push_back(box.find(s)->text);
    return out;
  }
  using strings = std::vector<std::string>;
};

TEST_F(inbox_test, sends_in_order_within_the_window_and_more_as_acks_free_room) {
  channel_inbox box(policy(2));
  for (auto t : {"a", "b", "c"}) add(box, t);
  auto s = box.take_sendable(t0);
  EXPECT_EQ(texts(box, s.send), (strings{"a", "b"}));
  EXPECT_TRUE(box.take_sendable(t0).send.empty()) << "the window is full";
  auto gone = box.ack("msg_b", ack_status::accepted, false, t0);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].text, "b");
  EXPECT_EQ(texts(box, box.take_sendable(t0).send), (strings{"c"}));
  EXPECT_EQ(box.size(), 2u);
}

TEST_F(inbox_test, nothing_overtakes_a_message_that_is_not_durable_yet) {
  channel_inbox box(policy(8));
  add(box, "a");
  inbound_message pending;
  pending.seq = box.next_seq();
  pending.message_id = "msg_p";
  pending.expires_at = t0 + expiry;
  box.add(pending);
  add(box, "c");
  EXPECT_EQ(texts(box, box.take_sendable(t0).send), (strings{"a"}));
  box.mark_durable(pending.seq);
  EXPECT_EQ(box.take_sendable(t0).send.size(), 2u);
}

TEST_F(inbox_test, no_ack_in_time_backs_off_doubling_up_to_the_maximum_and_resends_from_the_head) {
  channel_inbox box(policy(2));
  add(box, "a");
  add(box, "b");
  ASSERT_EQ(box.take_sendable(t0).send.size(), 2u);
  EXPECT_FALSE(box.check_timeouts(t0 + 999));
  EXPECT_TRUE(box.check_timeouts(t0 + 1000));
  EXPECT_EQ(box.in_flight(), 0u);
  long long t = t0 + 1000;
  for (long long wait : {1000, 2000, 4000, 8000, 8000}) {
    EXPECT_TRUE(box.take_sendable(t + wait - 1).send.empty()) << wait;
    auto again = box.take_sendable(t + wait);
    EXPECT_EQ(texts(box, again.send), (strings{"a", "b"})) << wait;
    t += wait;
    EXPECT_TRUE(box.check_timeouts(t + 1000));
    t += 1000;
  }
  // A good ack resets the backoff.
  box.take_sendable(t + 8000);
  t += 8000;
  box.ack("msg_a", ack_status::accepted, false, t);
  box.check_timeouts(t + 1000);
  EXPECT_EQ(box.paused_until(), t + 2000);
  EXPECT_EQ(box.attempts(2), 7);
}

TEST_F(inbox_test, rejections_end_or_pause_by_retryable_and_a_late_ack_still_counts) {
  channel_inbox box(policy(2));
  add(box, "a");
  add(box, "b");
  box.take_sendable(t0);
  EXPECT_TRUE(box.ack("msg_a", ack_status::rejected, true, t0).empty());
  EXPECT_TRUE(box.backing_off(t0));
  EXPECT_EQ(box.in_flight(), 0u) << "everything goes again from the head";
  // A late ack of the earlier transmission ends it anyway; a late retryable one does not pause again.
  EXPECT_EQ(box.ack("msg_a", ack_status::duplicate, false, t0 + 10).size(), 1u);
  EXPECT_TRUE(box.ack("msg_b", ack_status::rejected, true, t0 + 10).empty());
  EXPECT_EQ(box.paused_until(), t0 + 1000);
  EXPECT_EQ(box.ack("msg_b", ack_status::rejected, false, t0 + 20).size(), 1u);
  EXPECT_EQ(box.size(), 0u);
  EXPECT_TRUE(box.ack("msg_b", ack_status::accepted, false, t0 + 30).empty()) << "already gone";
}

TEST_F(inbox_test, context_rides_with_the_next_trigger_and_leaves_with_it) {
  channel_inbox box(policy(4));
  add(box, "x", false);
  add(box, "y", false);
  EXPECT_TRUE(box.take_sendable(t0).send.empty()) << "context is never sent alone";
  auto q = add(box, "q");
  add(box, "z", false);
  auto s = box.take_sendable(t0);
  ASSERT_EQ(texts(box, s.send), (strings{"q"}));
  std::vector<std::string> ctx;
  for (const auto* m : box.context_of(q)) ctx.push_back(m->text);
  EXPECT_EQ(ctx, (strings{"x", "y"}));
  auto gone = box.ack("msg_q", ack_status::accepted, false, t0);
  std::vector<std::string> gone_texts;
  for (const auto& m : gone) gone_texts.push_back(m.text);
  EXPECT_EQ(gone_texts, (strings{"x", "y", "q"}));
  EXPECT_EQ(box.size(), 1u) << "z waits for the next trigger";
  auto r = add(box, "r");
  box.take_sendable(t0);
  ASSERT_EQ(box.context_of(r).size(), 1u);
  EXPECT_EQ(box.context_of(r)[0]->text, "z");
}

TEST_F(inbox_test, the_cap_evicts_the_oldest_first_even_in_flight) {
  channel_inbox box(policy(2, 3));
  add(box, "a");
  add(box, "b");
  box.take_sendable(t0);
  add(box, "c");
  inbound_message d;
  d.seq = box.next_seq();
  d.message_id = "msg_d";
  d.text = "d";
  d.expires_at = t0 + expiry;
  auto evicted = box.add(d);
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].text, "a");
  EXPECT_EQ(box.in_flight(), 1u);
  EXPECT_EQ(box.size(), 3u);
}

TEST_F(inbox_test, expiry_counts_from_acceptance_and_a_restart_does_not_extend_it) {
  channel_inbox box(policy(2));
  add(box, "old", true, t0);
  add(box, "new", true, t0 + 10);
  box.take_sendable(t0);
  EXPECT_TRUE(box.expire(t0 + expiry - 1).empty());
  // A restart reads the records back with their times: the deadline is the same.
  channel_inbox reloaded(policy(2));
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    auto record = box.find(seq)->to_record();
    auto m = inbound_message::from_record(seq, record);
    ASSERT_TRUE(m);
    reloaded.restore(std::move(*m));
  }
  auto gone = reloaded.expire(t0 + expiry);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].text, "old");
  // An expired candidate is removed instead of sent.
  auto s = reloaded.take_sendable(t0 + expiry + 10);
  EXPECT_TRUE(s.send.empty());
  ASSERT_EQ(s.expired.size(), 1u);
  EXPECT_EQ(reloaded.size(), 0u);
}

TEST_F(inbox_test, a_route_change_puts_everything_in_flight_back_without_a_pause) {
  channel_inbox box(policy(2));
  add(box, "a");
  box.take_sendable(t0);
  box.route_lost();
  EXPECT_FALSE(box.backing_off(t0));
  EXPECT_EQ(texts(box, box.take_sendable(t0).send), (strings{"a"}));
  EXPECT_EQ(box.attempts(1), 2);
}

TEST_F(inbox_test, the_msg_id_window_survives_a_reload_and_ends_on_time) {
  channel_inbox box(policy());
  box.remember("p-1", t0 + expiry);
  EXPECT_TRUE(box.seen("p-1", t0));
  EXPECT_FALSE(box.seen("p-2", t0));
  channel_inbox reloaded(policy());
  reloaded.remember("p-1", t0 + expiry);  // what inbound_ids hands back
  EXPECT_TRUE(reloaded.seen("p-1", t0 + expiry - 1));
  EXPECT_FALSE(reloaded.seen("p-1", t0 + expiry));
  EXPECT_EQ(reloaded.forget_expired_ids(t0 + expiry), (strings{"p-1"}));
  EXPECT_EQ(reloaded.remembered_ids(), 0u);
}

TEST_F(inbox_test, the_id_sweep_forgets_ended_windows_only_never_early) {
  channel_inbox box(policy());
  box.remember("late", t0 + 3 * expiry);  // read back out of order: ends after the ones behind it
  box.remember("a", t0 + expiry);
  box.remember("b", t0 + expiry + 5);
  box.remember("a", t0 + expiry + 50);  // the same id again extends its window
  box.remember("gone", t0 + expiry + 6);
  box.forget("gone");  // its commit failed: never reported
  EXPECT_TRUE(box.forget_expired_ids(t0 + expiry).empty());
  // "late" has not ended, so nothing behind it is looked at yet: a late forget, never an early one.
  EXPECT_TRUE(box.forget_expired_ids(t0 + expiry + 10).empty());
  EXPECT_TRUE(box.seen("a", t0 + expiry + 10));
  EXPECT_EQ(box.forget_expired_ids(t0 + 3 * expiry), (strings{"late", "a", "b"}));
  EXPECT_EQ(box.remembered_ids(), 0u);
  EXPECT_TRUE(box.forget_expired_ids(t0 + 4 * expiry).empty());
}

TEST_F(inbox_test, a_record_round_trips_and_garbage_is_refused) {
  inbound_message m;
  m.message_id = "msg_1";
  m.msg_id = "p";
  m.text = "t";
  m.context_text = "c";
  m.channel_key = "echo/p2p/1";
  m.sender_id = "s";
  m.sender_name = "n";
  m.role = "viewer";
  m.modality = "voice";
  m.at = 5;
  m.trigger = false;
  m.accepted_at = t0;
  m.expires_at = t0 + 1;
  auto back = inbound_message::from_record(7, m.to_record());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->seq, 7u);
  EXPECT_EQ(back->to_record(), m.to_record());
  EXPECT_FALSE(inbound_message::from_record(1, "not json"));
  EXPECT_FALSE(inbound_message::from_record(1, "{\"text\":\"no id\"}"));
}

// The record is appended by hand, not built as a DOM: whatever a text holds comes back byte for byte.
TEST_F(inbox_test, a_record_keeps_quotes_control_characters_utf8_and_files) {
  inbound_message m;
  m.message_id = "msg_2";
  m.text = std::string("say \"hi\"\\ then\n\ttab \x01\x1f end: \xe4\xbd\xa0\xe5\xa5\xbd");
  m.sender_name = "O'Brien \"the\" \\";
  m.files = boost::json::array{boost::json::object{{"file_ref", "file_1"}, {"filename", "a \"b\".txt"}}};
  m.accepted_at = t0;
  m.expires_at = t0 + 1;
  const std::string record = m.to_record();
  boost::system::error_code ec;
  auto parsed = boost::json::parse(record, ec);
  ASSERT_FALSE(ec) << record;
  EXPECT_EQ(parsed.as_object().at("text").as_string(), m.text);
  auto back = inbound_message::from_record(3, record);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->text, m.text);
  EXPECT_EQ(back->sender_name, m.sender_name);
  EXPECT_EQ(back->files, m.files);
  EXPECT_TRUE(back->trigger);
  EXPECT_EQ(back->msg_id, "");  // empty fields are left out and come back empty
  EXPECT_EQ(record.find("msg_id"), std::string::npos);
}

// ---- reading an emit ----

plugin_manifest manifest_with_roles() {
  plugin_manifest m;
  m.id = "echo";
  m.chat = chat_limits{"Room", {{"host", "Host"}, {"viewer", "Viewer"}}, 500, length_unit::characters, 6};
  return m;
}

TEST(emit_message, reads_every_field_and_fills_the_default_channel_key) {
  auto m = parse_emit(R"({"text":"hi","sender_id":"u","sender_name":"U","msg_id":"9","at":12,"trigger":true,
                          "context_text":"U says hi","role":"host","modality":"voice"})",
                      manifest_with_roles());
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->channel_key, "echo/group/default");
  EXPECT_EQ(m->context_text, "U says hi");
  EXPECT_EQ(m->role, "host");
  EXPECT_EQ(m->at, 12);
  auto self = parse_emit(R"({"text":"me","role":"self"})", manifest_with_roles());
  ASSERT_TRUE(self);
  EXPECT_FALSE(self->trigger) << "self is context only";
}

TEST(emit_message, refuses_hostile_and_malformed_emits_naming_the_field_without_its_value) {
  auto m = manifest_with_roles();
  struct bad {
    std::string json;
    std::string field;
  };
  std::vector<bad> cases = {
      {"[]", "message"},
      {"{\"text\":\"x\"", "message"},
      {"{}", "text"},
      {R"({"text":null})", "text"},
      {R"({"text":"x","role":"guest"})", "role"},
      {R"({"text":"x","role":"Host"})", "role"},
      {R"({"text":"x","channel_key":"echo/group/"})", "channel_key"},
      {R"({"text":"x","channel_key":"echo"})", "channel_key"},
      {R"({"text":"x","at":1.5})", "at"},
      {R"({"text":"x","msg_id":""})", "msg_id"},
      {R"({"text":"x","files":{}})", "files"},
      {R"({"text":"x","files":[{"file_ref":"../etc/passwd"}]})", "files"},
      {R"({"text":"x","files":[{"name":"a"}]})", "files"},
      {R"({"text":"x","files":[{"file_ref":"file_0123456789abcdef0123456789abcdef"},{"file_ref":"file_0123456789abcdef0123456789abcdef"}]})", "files"},
      {R"({"text":"x","sender_id":"a\u0000b"})", "sender_id"},
      {std::string(R"({"text":")") + std::string(300000, 'a') + "\"}", "message"},
      {std::string(R"({"text":"x","n":)") + std::string(20, '[') + std::string(20, ']') + "}", "message"},
  };
  for (const auto& b : cases) {
    auto r = parse_emit(b.json, m);
    ASSERT_FALSE(r) << b.json.substr(0, 80);
    EXPECT_TRUE(r.error().starts_with(b.field)) << r.error();
    EXPECT_EQ(r.error().find("a\\u0000b"), std::string::npos);
  }
  auto secret = parse_emit(R"({"text":"x","sender_name":5,"token":"sk-planted-secret-123"})", m);
  ASSERT_FALSE(secret);
  EXPECT_EQ(secret.error().find("sk-planted"), std::string::npos) << secret.error();
}

}  // namespace
}  // namespace xconn
