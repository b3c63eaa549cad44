// The long-poll consumer through a real host table: a page's messages emitted together with the cursor riding on
// the last, the next poll from the page's cursor; a message not stored asked again from its own cursor (kept on its
// own); an outage shown on the health board and cleared by the next page; a page with nothing to emit keeps its
// cursor alone; stop() ends the loop.
#include "recording_host.hpp"

#include <xconn/adapter/poll_loop.hpp>

#include <gtest/gtest.h>

#include <boost/asio/this_coro.hpp>

#include <deque>

namespace poll_loop_test {

using xconn::adapter_test::exposed_adapter;
using xconn::adapter_test::recording_host;
using namespace std::chrono_literals;

struct int_cursor {
  int n = 0;
  std::string kept() const { return std::to_string(n); }
};
using loop_type = xconn::adapter::poll_loop<int_cursor>;

// The target: scripted pages, the last one repeated; the cursors it was asked from.
struct page_target {
  std::mutex mutex;
  std::deque<loop_type::page> pages;
  std::vector<int> asked;
  std::atomic<bool> ended{false};

  boost::asio::awaitable<loop_type::page> poll(int_cursor c) {
    loop_type::page p;
    {
      std::lock_guard lock(mutex);
      asked.push_back(c.n);
      p = pages.front();
      if (pages.size() > 1) pages.pop_front();
    }
    if (p.what == loop_type::page::kind::again) {  // a target answering slowly
      boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, 5ms);
      co_await t.async_wait(boost::asio::use_awaitable);
    }
    co_return p;
  }
  std::size_t asked_count() {
    std::lock_guard lock(mutex);
    return asked.size();
  }
};

loop_type::message page_message(std::string text, int retry) {
  return {"c1", R"({"text":")" + text + "\"}", {retry}, "update " + std::to_string(retry + 1), false};
}
loop_type::page page_of(std::vector<loop_type::message> m, int next) {
  loop_type::page p;
  p.messages = std::move(m);
  p.next = int_cursor{next};
  return p;
}

struct loop_fixture {
  recording_host host;
  page_target target;
  exposed_adapter adapter{host.host()};
  xconn::adapter::health_board board{host.host()};
  loop_type loop{adapter, board, {"poller k", "cur", "messages_refused", 60s, 10ms}};

  explicit loop_fixture(std::initializer_list<loop_type::page> pages) {
    target.pages = pages;
    adapter.start(host.completion_for(host.new_call()));
    adapter.spawn([](loop_fixture& f) -> boost::asio::awaitable<void> {
      co_await f.loop.run(int_cursor{0}, [&f](const int_cursor& c) { return f.target.poll(c); });
      f.target.ended = true;
    }(*this));
  }
  ~loop_fixture() {
    loop.stop();
    adapter.halt();
  }
  // Waits (bounded) for what the host's records do not signal: the target's side, looked at every 10 ms.
  bool eventually(std::function<bool()> pred) {
    for (auto end = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < end;)
      if (host.wait_for([&](recording_host&) { return pred(); }, 10ms)) return true;
    return false;
  }
  bool wait_asked(std::size_t n) {
    return eventually([&] { return target.asked_count() >= n; });
  }
};

TEST(PollLoop, APagesMessagesGoTogetherWithTheCursorOnTheLast) {
  loop_fixture f({page_of({page_message("a", 0), page_message("b", 1)}, 2), loop_type::stop_polling()});
  ASSERT_TRUE(f.host.wait_for([](recording_host& h) { return h.emits_.size() == 2; }));
  f.host.read([](recording_host& h) {
    EXPECT_EQ(h.emits_[0], R"(c1 {"text":"a"})");
    EXPECT_EQ(h.emits_[1], R"(c1 {"text":"b"})");
    EXPECT_EQ(h.kv_ops_, std::vector<std::string>{"cur"});  // with the last emit only
    return 0;
  });
  EXPECT_EQ(f.target.asked_count(), 1u);  // the next poll waits for the page to be stored
  f.host.answer_next(true);
  f.host.answer_next(true);
  ASSERT_TRUE(f.wait_asked(2));
  EXPECT_EQ(f.target.asked[1], 2);
  ASSERT_TRUE(f.eventually([&] { return f.target.ended.load(); }));
}

TEST(PollLoop, AMessageNotStoredIsAskedForAgainFromItsCursor) {
  loop_fixture f({page_of({page_message("a", 0), page_message("b", 1)}, 2), loop_type::stop_polling()});
  ASSERT_TRUE(f.host.wait_for([](recording_host& h) { return h.held_.size() == 2; }));
  f.host.answer_next(true);
  f.host.answer_next(false);  // store_failed: may pass later
  ASSERT_TRUE(f.host.wait_for([](recording_host& h) { return h.kv_ops_.size() == 2 && h.held_.size() == 1; }));
  f.host.answer_next(true);  // the cursor 1 kept on its own
  ASSERT_TRUE(f.wait_asked(2));
  EXPECT_EQ(f.target.asked[1], 1);
  f.host.read([](recording_host& h) {
    bool logged = false;
    for (const auto& l : h.logs_) logged |= l.find("exposed: update 2 was not stored (store_failed)") != std::string::npos;
    EXPECT_TRUE(logged);
    return 0;
  });
}

TEST(PollLoop, AnOutageIsOnTheHealthBoardUntilAPageComesAndAnEmptyPageKeepsItsCursor) {
  loop_fixture f({loop_type::outage("target_down"), page_of({}, 5), loop_type::stop_polling()});
  ASSERT_TRUE(f.host.wait_for([](recording_host& h) { return !h.health_.empty(); }));
  EXPECT_EQ(f.host.read([](recording_host& h) { return h.health_[0]; }), "degraded:target_down");
  // After the backoff's first second: the page clears the trouble and keeps its cursor alone.
  ASSERT_TRUE(f.host.wait_for([](recording_host& h) { return h.held_.size() == 1; }, 3s));
  f.host.read([](recording_host& h) {
    EXPECT_EQ(h.health_.back(), "healthy:");
    EXPECT_EQ(h.kv_ops_, std::vector<std::string>{"cur"});
    EXPECT_TRUE(h.emits_.empty());
    return 0;
  });
  f.host.answer_next(true);
  ASSERT_TRUE(f.wait_asked(3));
  EXPECT_EQ(f.target.asked[2], 5);
}

TEST(PollLoop, StopEndsTheLoopAndClearsItsTrouble) {
  loop_fixture f({loop_type::outage("target_down"), loop_type::again()});
  ASSERT_TRUE(f.wait_asked(3));  // the outage's wait passed, then polls answered "again"
  f.loop.stop();
  ASSERT_TRUE(f.eventually([&] { return f.target.ended.load(); }));
  EXPECT_EQ(f.host.read([](recording_host& h) { return h.health_.back(); }), "healthy:");
  EXPECT_TRUE(f.loop.stopped());
}

}  // namespace poll_loop_test
