#include "core/channels/tool_calls.hpp"

#include "core/base/ids.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace xconn {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

std::unique_ptr<store> open_store(const std::string& path, std::vector<std::string> dbs = {"tool_calls"}) {
  auto s = store::open({path, 1ull << 26, std::move(dbs)});
  if (!s) ADD_FAILURE() << s.error();
  return s ? std::move(*s) : nullptr;
}

// Collects the outcomes handed to done callbacks (any thread); waits for a count with a deadline.
struct answers {
  std::mutex m;
  std::condition_variable cv;
  std::vector<tool_outcome> got;
  std::vector<std::thread::id> threads;
  tool_calls::done_fn make() {
    return [this](tool_outcome o) {
      std::lock_guard lock(m);
      got.push_back(std::move(o));
      threads.push_back(std::this_thread::get_id());
      cv.notify_all();
    };
  }
  bool wait_for(std::size_t n, std::chrono::milliseconds deadline = 10s) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, deadline, [&] { return got.size() >= n; });
  }
  std::size_t size() {
    std::lock_guard lock(m);
    return got.size();
  }
  tool_outcome at(std::size_t i) {
    std::lock_guard lock(m);
    return got.at(i);
  }
};

tool_outcome success(std::string result = R"({"status":"sent","message_id":"msg_1"})") {
  tool_outcome o;
  o.ok = true;
  o.result_json = std::move(result);
  return o;
}

tool_outcome business_error() {
  tool_outcome o;
  o.code = "recipient_unknown";
  o.message = "no such chat";
  return o;
}

void expect_same(const tool_outcome& a, const tool_outcome& b) {
  EXPECT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.result_json, b.result_json);
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(a.message, b.message);
}

// A run that counts how often the tool ran and finishes at once with outcome.
tool_calls::run_fn runs(std::atomic<int>& count, tool_outcome outcome, bool keep = true) {
  return [&count, outcome, keep](auto finish) {
    ++count;
    finish(outcome, keep);
  };
}

const std::string key = tool_calls::key_for("echo", "cch_0123456789abcdefABCDEF", "idem-1");

std::string record_at(long long at, const tool_outcome& o) {
  json::object r{{"at", at}, {"ok", o.ok}};
  if (o.ok)
    r["result"] = o.result_json;
  else
    r["code"] = o.code, r["message"] = o.message;
  return json::serialize(r);
}

class ToolCalls : public ::testing::Test {
 protected:
  test::temp_dir dir;
  std::unique_ptr<store> db = open_store(dir.str());
  std::unique_ptr<tool_calls> calls = std::make_unique<tool_calls>(*db, 60s);
};

TEST_F(ToolCalls, FirstCallRunsAndIsCommittedBeforeItIsAnswered) {
  std::atomic<int> ran{0};
  answers a;
  std::atomic<bool> committed_when_answered{false};
  calls->run_once(key, runs(ran, success()), [&](tool_outcome o) {
    committed_when_answered = db->get(tool_calls::database, key).has_value();
    a.make()(std::move(o));
  });
  ASSERT_TRUE(a.wait_for(1));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(0), success());
  EXPECT_TRUE(committed_when_answered);
}

TEST_F(ToolCalls, RepeatReplaysWithoutRunning) {
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  calls->run_once(key, runs(ran, success(R"({"other":true})")), a.make());
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(1), success());
  // A replay is answered on the caller's thread, at once.
  EXPECT_EQ(a.threads.at(1), std::this_thread::get_id());
  calls->run_once(key, runs(ran, success()), a.make());
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(ran, 1);
}

TEST_F(ToolCalls, BusinessErrorIsReplayed) {
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(key, runs(ran, business_error()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  calls->run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(0), business_error());
  expect_same(a.at(1), business_error());
}

TEST_F(ToolCalls, RepeatWhileRunningWaitsForTheFirst) {
  std::atomic<int> ran{0};
  std::function<void(tool_outcome, bool)> finish_first;
  answers a;
  calls->run_once(key, [&](auto finish) { ++ran, finish_first = std::move(finish); }, a.make());
  ASSERT_EQ(ran, 1);
  for (int i = 0; i < 3; ++i) calls->run_once(key, runs(ran, success(R"({"second":true})")), a.make());
  EXPECT_EQ(ran, 1);
  // Answers come from the caller's thread or the store's writer: once the writer has run everything queued so
  // far, whatever it owed has been handed over.
  db->flush();
  EXPECT_EQ(a.size(), 0u);  // nobody answered before the tool finished
  // The tool finishes from another thread, as a plugin would.
  std::thread plugin([&] { finish_first(success(), true); });
  plugin.join();
  ASSERT_TRUE(a.wait_for(4));
  EXPECT_EQ(ran, 1);
  for (std::size_t i = 0; i < 4; ++i) expect_same(a.at(i), success());
  // And later repeats replay.
  calls->run_once(key, runs(ran, success(R"({"third":true})")), a.make());
  ASSERT_TRUE(a.wait_for(5));
  expect_same(a.at(4), success());
  EXPECT_EQ(ran, 1);
}

TEST_F(ToolCalls, ManyThreadsRunOnce) {
  std::atomic<int> ran{0};
  answers a;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 25; ++j)
        calls->run_once(key, [&](auto finish) {
          ++ran;
          std::this_thread::sleep_for(2ms);
          finish(success(), true);
        }, a.make());
    });
  for (auto& t : threads) t.join();
  ASSERT_TRUE(a.wait_for(200));
  EXPECT_EQ(ran, 1);
  for (std::size_t i = 0; i < 200; ++i) expect_same(a.at(i), success());
}

TEST_F(ToolCalls, NotKeptIsNotReplayed) {
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(key, runs(ran, business_error(), false), a.make());
  ASSERT_TRUE(a.wait_for(1));
  expect_same(a.at(0), business_error());
  db->flush();
  EXPECT_FALSE(db->get(tool_calls::database, key));
  calls->run_once(key, runs(ran, success(), true), a.make());
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 2);
  expect_same(a.at(1), success());
}

TEST_F(ToolCalls, WaitersOfANotKeptCallGetItsOutcome) {
  std::atomic<int> ran{0};
  std::function<void(tool_outcome, bool)> finish_first;
  answers a;
  calls->run_once(key, [&](auto finish) { ++ran, finish_first = std::move(finish); }, a.make());
  calls->run_once(key, runs(ran, success()), a.make());
  tool_outcome timeout;
  timeout.code = "tool_timeout";
  finish_first(timeout, false);
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(0), timeout);
  expect_same(a.at(1), timeout);
  // Nothing kept: the next call runs.
  calls->run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(3));
  EXPECT_EQ(ran, 2);
}

TEST_F(ToolCalls, RecordOlderThanTheWindowIsNotReplayed) {
  ASSERT_FALSE(db->write_sync(write_batch{}.put(std::string(tool_calls::database), key,
                                                record_at(unix_ms() - 61'000, business_error()))));
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(0), success());
  // The new outcome replaced the old record.
  calls->run_once(key, runs(ran, business_error()), a.make());
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(1), success());
}

TEST_F(ToolCalls, RecordInsideTheWindowWrittenDirectlyIsReplayed) {
  ASSERT_FALSE(db->write_sync(write_batch{}.put(std::string(tool_calls::database), key,
                                                record_at(unix_ms() - 59'000, business_error()))));
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  EXPECT_EQ(ran, 0);
  expect_same(a.at(0), business_error());
}

TEST_F(ToolCalls, MalformedRecordIsNotReplayed) {
  for (auto bad : {"", "not json", "[]", R"({"ok":true,"result":"{}"})", R"({"at":"1","ok":true})",
                   R"({"at":9999999999999,"ok":"yes"})"}) {
    ASSERT_FALSE(db->write_sync(write_batch{}.put(std::string(tool_calls::database), key, bad)));
    std::atomic<int> ran{0};
    answers a;
    calls->run_once(key, runs(ran, success(), false), a.make());
    ASSERT_TRUE(a.wait_for(1));
    EXPECT_EQ(ran, 1) << bad;
  }
}

TEST(ToolCallsWindow, OneSecondWindowExpires) {
  test::temp_dir dir;
  auto db = open_store(dir.str());
  ASSERT_TRUE(db);
  tool_calls calls(*db, 1s);
  std::atomic<int> ran{0};
  answers a;
  calls.run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  calls.run_once(key, runs(ran, success()), a.make());
  EXPECT_EQ(ran, 1);  // inside the window (well under a second has passed)
  auto start = std::chrono::steady_clock::now();
  // Repeat until the window has passed and the call runs again; bounded by a deadline.
  EXPECT_TRUE(test::wait_until([&] {
    calls.run_once(key, runs(ran, success()), a.make());
    return ran.load() == 2;
  }, 5s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 900ms);
  db->flush();  // the last run's answer refers to `a`, which goes first
}

TEST(ToolCallsRestart, ReplaySurvivesReopeningTheStore) {
  test::temp_dir dir;
  std::atomic<int> ran{0};
  {
    auto db = open_store(dir.str());
    ASSERT_TRUE(db);
    tool_calls calls(*db, 60s);
    answers a;
    calls.run_once(key, runs(ran, success()), a.make());
    ASSERT_TRUE(a.wait_for(1));
  }
  auto db = open_store(dir.str());
  ASSERT_TRUE(db);
  tool_calls calls(*db, 60s);
  answers a;
  calls.run_once(key, runs(ran, business_error()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(0), success());
}

TEST(ToolCallsStore, FailedCommitStillAnswersButIsNotReplayed) {
  test::temp_dir dir;
  auto db = open_store(dir.str(), {"other"});  // no tool_calls database: every write fails
  ASSERT_TRUE(db);
  tool_calls calls(*db, 60s);
  std::atomic<int> ran{0};
  answers a;
  calls.run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  expect_same(a.at(0), success());
  calls.run_once(key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 2);
}

TEST_F(ToolCalls, SweepErasesOnlyExpiredRecords) {
  auto old_key = tool_calls::key_for("echo", "cch_a", "old");
  auto older_key = tool_calls::key_for("echo", "cch_a", "older");
  auto fresh_key = tool_calls::key_for("echo", "cch_a", "fresh");
  auto edge_key = tool_calls::key_for("echo", "cch_a", "edge");
  write_batch b;
  b.put(std::string(tool_calls::database), old_key, record_at(unix_ms() - 61'000, success()));
  b.put(std::string(tool_calls::database), older_key, record_at(unix_ms() - 86'400'000, success()));
  b.put(std::string(tool_calls::database), edge_key, record_at(unix_ms() - 50'000, success()));
  ASSERT_FALSE(db->write_sync(std::move(b)));
  calls->load();  // the records a previous run left
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(fresh_key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(1));

  EXPECT_EQ(calls->sweep(), 2u);
  db->flush();
  EXPECT_FALSE(db->get(tool_calls::database, old_key));
  EXPECT_FALSE(db->get(tool_calls::database, older_key));
  EXPECT_TRUE(db->get(tool_calls::database, edge_key));
  EXPECT_TRUE(db->get(tool_calls::database, fresh_key));
  EXPECT_EQ(calls->sweep(), 0u);
  // The kept ones still replay.
  calls->run_once(fresh_key, runs(ran, business_error()), a.make());
  calls->run_once(edge_key, runs(ran, business_error()), a.make());
  ASSERT_TRUE(a.wait_for(3));
  EXPECT_EQ(ran, 1);
}

TEST_F(ToolCalls, OneSweepErasesEveryEndedRecordHoweverMany) {
  // More than a sweep used to take at once (10,000 a sweep fell behind 50,000 calls a minute and the store grew).
  constexpr int ended = 25'000, kept = 100;
  write_batch b;
  for (int i = 0; i < ended + kept; ++i)
    b.put(std::string(tool_calls::database), tool_calls::key_for("echo", "cch_a", "k" + std::to_string(i)),
          record_at(unix_ms() - (i < ended ? 120'000 : 1'000), success()));
  b.put(std::string(tool_calls::database), tool_calls::key_for("echo", "cch_a", "unreadable"), "{");
  ASSERT_FALSE(db->write_sync(std::move(b)));
  calls->load();
  EXPECT_EQ(calls->sweep(), ended + 1u);
  auto left = [&] {
    int n = 0;
    db->scan(tool_calls::database, "", [&](std::string_view, std::string_view) { return ++n, true; });
    return n;
  };
  EXPECT_TRUE(test::wait_until([&] { return left() == kept; })) << left();  // the erase goes in steps
  EXPECT_EQ(calls->sweep(), 0u);
}

TEST_F(ToolCalls, ARecordWrittenOverAfterItsWindowIsNotErasedByTheOldOnesSweep) {
  write_batch b;
  b.put(std::string(tool_calls::database), key, record_at(unix_ms() - 61'000, business_error()));
  ASSERT_FALSE(db->write_sync(std::move(b)));
  calls->load();
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(key, runs(ran, success()), a.make());  // the old record has ended: the tool runs again
  ASSERT_TRUE(a.wait_for(1));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(calls->sweep(), 0u);  // the old record's entry goes; the key's new record stays
  db->flush();
  calls->run_once(key, runs(ran, business_error()), a.make());
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 1);
  expect_same(a.at(1), success());
}

TEST(ToolCallsKey, KeyForSeparatesPluginChannelAndKey) {
  std::set<std::string> keys{
      tool_calls::key_for("echo", "cch_a", "k"),  tool_calls::key_for("echo2", "cch_a", "k"),
      tool_calls::key_for("echo", "cch_b", "k"),  tool_calls::key_for("echo", "cch_a", "k2"),
      tool_calls::key_for("echoc", "ch_a", "k"),  tool_calls::key_for("echo", "cch_ak", ""),
      tool_calls::key_for("echo", "cch_", "ak"),  tool_calls::key_for("", "echocch_a", "k"),
  };
  EXPECT_EQ(keys.size(), 8u);
  EXPECT_EQ(tool_calls::key_for("echo", "cch_a", "k"), tool_calls::key_for("echo", "cch_a", "k"));
}

TEST_F(ToolCalls, SameKeyOnAnotherChannelOrPluginRunsAgain) {
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(tool_calls::key_for("echo", "cch_a", "idem"), runs(ran, success()), a.make());
  calls->run_once(tool_calls::key_for("echo", "cch_b", "idem"), runs(ran, success()), a.make());
  calls->run_once(tool_calls::key_for("other", "cch_a", "idem"), runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(3));
  EXPECT_EQ(ran, 3);
  calls->run_once(tool_calls::key_for("echo", "cch_a", "idem"), runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(4));
  EXPECT_EQ(ran, 3);
}

// An idempotency key is any string xAgent sends; a long one must still protect the side effect.
TEST_F(ToolCalls, LongIdempotencyKeyIsStillReplayed) {
  auto long_key = tool_calls::key_for("echo", "cch_0123456789abcdefABCDEF", std::string(600, 'k'));
  std::atomic<int> ran{0};
  answers a;
  calls->run_once(long_key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(1));
  calls->run_once(long_key, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(2));
  EXPECT_EQ(ran, 1) << "a repeat with a 600-byte idempotency key ran the side-effect tool again";
  // Another long key that differs only in its last byte is another call.
  auto sibling = tool_calls::key_for("echo", "cch_0123456789abcdefABCDEF", std::string(599, 'k') + "j");
  calls->run_once(sibling, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(3));
  EXPECT_EQ(ran, 2);
  // Even a 1 MiB key is replayed.
  auto huge = tool_calls::key_for("echo", "cch_0123456789abcdefABCDEF", std::string(1 << 20, 'h'));
  calls->run_once(huge, runs(ran, success()), a.make());
  calls->run_once(huge, runs(ran, success()), a.make());
  ASSERT_TRUE(a.wait_for(5));
  EXPECT_EQ(ran, 3);
}

}  // namespace
}  // namespace xconn
