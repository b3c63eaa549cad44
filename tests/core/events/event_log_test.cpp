// event_log over a real LMDB folder and an injected clock: pages, the per-plugin cap, seq that never repeats after
// reopening (cleanly or without the last renewal), waiters woken only past their seq, and metadata-only records.
#include "core/events/event_log.hpp"

#include "support/test_support.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace xconn {
namespace {
namespace json = boost::json;

class EventLog : public ::testing::Test {
 protected:
  void SetUp() override { reopen(); }
  void reopen() {
    log.reset();
    db.reset();
    auto opened = store::open({dir.str(), 1ull << 26, {std::string(event_log::database)}});
    ASSERT_TRUE(opened) << opened.error();
    db = std::move(*opened);
    log = std::make_unique<event_log>(
        *db, [](std::string_view id) { return "prov-" + std::string(id); },
        [] { return std::chrono::system_clock::time_point(std::chrono::milliseconds(1790000000123)); });
  }
  json::array page(const std::string& plugin, std::uint64_t after = 0, std::size_t limit = 1000) {
    return json::parse(log->read(plugin, after, limit).events_json).as_array();
  }
  static aios_event fault() { return {"AdapterFault", "", "", "", json::object{{"health", "degraded"}}}; }

  test::temp_dir dir;
  std::unique_ptr<store> db;
  std::unique_ptr<event_log> log;
};

TEST_F(EventLog, an_event_has_the_common_fields_and_each_plugin_its_own_seq) {
  {
    correlation_scope cause("pkt_1");
    log->record("a", {"ChannelStatusChanged", "cch_1", "", "", json::object{{"status", "connected"}}});
  }
  log->record("b", fault());
  auto a = page("a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(json::serialize(a[0]),
            R"({"seq":1,"event_type":"ChannelStatusChanged","timestamp":"2026-09-21T14:13:20.123Z","channel_type":"dialog",)"
            R"("target":"prov-a","session_id":"cch_1","correlation_id":"pkt_1","payload":{"status":"connected"}})");
  EXPECT_EQ(page("b")[0].at("seq"), 1);
}

// Every record names a cause: its own, its message's, the innermost scope of the recording thread, else a fresh id.
TEST_F(EventLog, every_record_has_a_correlation_id_from_the_event_the_scope_or_a_fresh_one) {
  log->record("a", fault());
  log->record("a", fault());
  {
    correlation_scope outer("pkt_outer");
    {
      correlation_scope inner("auth_inner");
      log->record("a", fault());
      log->record("a", {"status", "cch_1", "", "pkt_own", json::object{}});
    }
    log->record("a", fault());
    log->record_message("a", "outbound", "cch_1", "out-1", "pkt_final", 3, {});
  }
  log->record("a", fault());
  auto all = page("a");
  ASSERT_EQ(all.size(), 7u);
  auto id = [&](std::size_t i) { return std::string(all[i].at("correlation_id").as_string()); };
  EXPECT_TRUE(id(0).starts_with("cor_")) << id(0);
  EXPECT_EQ(id(0).size(), 26u);
  EXPECT_NE(id(0), id(1));  // fresh each time
  EXPECT_EQ(id(2), "auth_inner");
  EXPECT_EQ(id(3), "pkt_own");
  EXPECT_EQ(id(4), "pkt_outer");
  EXPECT_EQ(id(5), "pkt_final");
  EXPECT_EQ(all[5].at("message_id"), "out-1");
  EXPECT_TRUE(id(6).starts_with("cor_")) << id(6);
  EXPECT_EQ(correlation_scope::current(), "");
}

TEST_F(EventLog, a_refused_plugin_call_is_an_error_event_naming_what_was_refused) {
  log->record_refusal("a", "cch_1", "approval_request", "unsupported");
  log->record_refusal("a", "", "approval_request", "unsupported");
  auto all = page("a");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].at("event_type"), "error");
  EXPECT_EQ(all[0].at("session_id"), "cch_1");
  EXPECT_EQ(json::serialize(all[0].at("payload")),
            R"({"direction":"inbound","kind":"approval_request","code":"unsupported"})");
  EXPECT_FALSE(all[1].as_object().contains("session_id"));
}

TEST_F(EventLog, a_message_record_is_one_message_and_one_attachment_meta_per_file_and_correlates_to_the_message) {
  log->record_message("a", "inbound", "cch_1", "msg_1", "", 11, {{"fr_1", "image/png", 5}, {"fr_2", "", 0}});
  auto all = page("a");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].at("correlation_id"), "msg_1");
  EXPECT_EQ(json::serialize(all[0].at("payload")), R"({"direction":"inbound","bytes":11,"files":2})");
  EXPECT_EQ(json::serialize(all[1].at("payload")),
            R"({"direction":"inbound","file_ref":"fr_1","mime_type":"image/png","byte_size":5})");
  EXPECT_EQ(all[2].at("event_type"), "attachment_meta");
}

TEST_F(EventLog, only_the_last_thousand_are_kept_and_a_page_is_bounded_by_its_limit) {
  for (int i = 0; i < 1100; ++i) log->record("a", fault());
  auto all = page("a");
  ASSERT_EQ(all.size(), event_log::kept_per_plugin);
  EXPECT_EQ(all.front().at("seq"), 101);
  auto p = log->read("a", 1050, 7);
  EXPECT_EQ(p.count, 7u);
  EXPECT_EQ(p.next_after, 1057u);
  EXPECT_EQ(log->read("a", 5000, 7).next_after, 5000u);
  EXPECT_EQ(log->read("nobody", 3, 7).events_json, "[]");
}

TEST_F(EventLog, seq_never_repeats_after_reopening_even_when_the_last_renewal_was_not_waited_for) {
  log->open("a");
  for (std::uint64_t i = 0; i < event_log::seq_block; ++i) log->record("a", fault());  // renews on the way
  auto last = page("a").back().at("seq").to_number<std::uint64_t>();
  db->flush();
  reopen();
  log->record("a", fault());  // a plugin never opened this run still starts past the reservation
  EXPECT_GT(page("a")[0].at("seq").to_number<std::uint64_t>(), last);
  auto second_run = page("a")[0].at("seq").to_number<std::uint64_t>();
  reopen();
  log->open("a");
  log->record("a", fault());
  EXPECT_GT(page("a")[0].at("seq").to_number<std::uint64_t>(), second_run);
}

TEST_F(EventLog, a_waiter_wakes_once_for_an_event_past_its_seq_and_not_after_it_is_cancelled) {
  log->record("a", fault());
  int woken = 0;
  log->wait_past("a", 0, [&] { ++woken; });  // there is one already: at once
  EXPECT_EQ(woken, 1);
  log->wait_past("a", 2, [&] { ++woken; });  // seq 2 is not past 2
  log->record("a", fault());
  EXPECT_EQ(woken, 1);
  log->record("a", fault());  // seq 3
  EXPECT_EQ(woken, 2);
  log->record("a", fault());
  EXPECT_EQ(woken, 2);  // once
  auto ticket = log->wait_past("a", 10, [&] { ++woken; });
  log->cancel(ticket);
  log->wake_all();
  EXPECT_EQ(woken, 2);
  log->wait_past("b", 0, [&] { ++woken; });
  log->wake_all();  // shutdown
  EXPECT_EQ(woken, 3);
}

}  // namespace
}  // namespace xconn
