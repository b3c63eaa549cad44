// Live messages on a scripted target: the first text creates the message and a burst of texts while a request is on
// its way costs one edit with the newest; a conversation's edits keep the edit gap across its messages; a failed
// create leaves the message to the final; the final takes the target's id once no request is on its way, or after
// its longest wait.
#include "recording_host.hpp"

#include <xconn/adapter/live_messages.hpp>

#include <gtest/gtest.h>

#include <mutex>

namespace live_messages_test {

using xconn::adapter::live_messages;
using xconn::adapter_test::exposed_adapter;
using xconn::adapter_test::recording_host;
using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The target: every create and edit it was asked for, held on its way while `hold` is set.
struct scripted_target {
  struct request {
    std::string what;  // "create a" or "edit m1 c"
    clock::time_point at;
  };
  explicit scripted_target(exposed_adapter& a) : adapter(a) {}
  exposed_adapter& adapter;
  std::mutex mutex;
  std::vector<request> requests;
  std::atomic<bool> hold{false}, fail{false};
  std::atomic<int> finished{0};
  int created = 0;

  boost::asio::awaitable<std::optional<std::string>> create(std::string text) {
    std::string id;
    {
      std::lock_guard lock(mutex);
      requests.push_back({"create " + text, clock::now()});
      id = "m" + std::to_string(++created);
    }
    while (hold) co_await adapter.pause(2ms);
    ++finished;
    if (fail) co_return std::nullopt;
    co_return id;
  }
  boost::asio::awaitable<bool> edit(std::string id, std::string text) {
    {
      std::lock_guard lock(mutex);
      requests.push_back({"edit " + id + " " + text, clock::now()});
    }
    while (hold) co_await adapter.pause(2ms);
    ++finished;
    co_return !fail;
  }
  std::vector<std::string> asked() {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (const auto& r : requests) out.push_back(r.what);
    return out;
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return requests.size();
  }
};

struct live_fixture {
  recording_host host;
  exposed_adapter adapter{host.host()};
  scripted_target target{adapter};
  live_messages live;
  std::mutex taken_mutex;
  std::optional<std::string> taken;

  explicit live_fixture(clock::duration gap) : live(adapter, gap) {
    adapter.start(host.completion_for(host.new_call()));
  }
  ~live_fixture() { adapter.halt(); }

  void update(std::string key, std::string conversation, std::string text) {
    adapter.spawn([](live_fixture& f, std::string key, std::string conversation,
                     std::string text) -> boost::asio::awaitable<void> {
      live_messages::create_fn create = [&f](std::string t) { return f.target.create(std::move(t)); };
      live_messages::edit_fn edit = [&f](std::string id, std::string t) {
        return f.target.edit(std::move(id), std::move(t));
      };
      co_await f.live.update(std::move(key), std::move(conversation), std::move(text), std::move(create),
                             std::move(edit));
    }(*this, std::move(key), std::move(conversation), std::move(text)));
  }
  void take(std::string key, clock::duration longest_wait) {
    adapter.spawn([](live_fixture& f, std::string key, clock::duration wait) -> boost::asio::awaitable<void> {
      auto id = co_await f.live.take(std::move(key), wait);
      std::lock_guard lock(f.taken_mutex);
      f.taken = std::move(id);
    }(*this, std::move(key), longest_wait));
  }
  std::optional<std::string> taken_id() {
    std::lock_guard lock(taken_mutex);
    return taken;
  }
  // Waits (bounded) for the target's or the taker's side, looked at every 5 ms.
  bool eventually(std::function<bool()> pred) {
    for (auto end = clock::now() + 5s; clock::now() < end; std::this_thread::sleep_for(5ms))
      if (pred()) return true;
    return false;
  }
};

TEST(LiveMessages, TextsWhileACreateIsOnItsWayCostOneEditWithTheNewest) {
  live_fixture f(0s);
  f.target.hold = true;
  f.update("c1\n7", "chat", "a");
  ASSERT_TRUE(f.eventually([&] { return f.target.count() == 1; }));
  f.update("c1\n7", "chat", "ab");
  f.update("c1\n7", "chat", "abc");
  f.target.hold = false;
  ASSERT_TRUE(f.eventually([&] { return f.target.finished == 2; }));
  EXPECT_EQ(f.target.asked(), (std::vector<std::string>{"create a", "edit m1 abc"}));
  f.take("c1\n7", 1s);
  ASSERT_TRUE(f.eventually([&] { return f.taken_id().has_value(); }));
  EXPECT_EQ(*f.taken_id(), "m1");
  EXPECT_EQ(f.live.size(), 0u);
}

TEST(LiveMessages, AConversationsEditsKeepTheGapAcrossItsMessages) {
  constexpr auto gap = 150ms;
  live_fixture f(gap);
  f.update("c1\n1", "chat", "a");
  f.update("c1\n2", "chat", "x");  // a create is not an edit: both go at once
  ASSERT_TRUE(f.eventually([&] { return f.target.finished == 2; }));
  f.update("c1\n1", "chat", "ab");
  f.update("c1\n2", "chat", "xy");
  f.update("c2\n3", "other chat", "q");
  ASSERT_TRUE(f.eventually([&] { return f.target.finished == 5; }));
  std::vector<clock::time_point> edits, creates;
  {
    std::lock_guard lock(f.target.mutex);
    for (const auto& r : f.target.requests) (r.what.starts_with("edit") ? edits : creates).push_back(r.at);
  }
  ASSERT_EQ(edits.size(), 2u);
  // A turn is taken at most once a gap; the records trail their turns by the call's own microseconds.
  constexpr auto slack = 20ms;
  EXPECT_GE(edits[1] - edits[0], gap - slack);
  EXPECT_GE(edits[0] - creates[1], gap - slack);  // a message's first edit waits a gap after the last creation
}

TEST(LiveMessages, AFailedCreateLeavesTheMessageToTheFinal) {
  live_fixture f(0s);
  f.target.fail = true;
  f.update("c1\n7", "chat", "a");
  ASSERT_TRUE(f.eventually([&] { return f.target.finished == 1; }));
  f.take("c1\n7", 1s);
  ASSERT_TRUE(f.eventually([&] { return f.taken_id().has_value(); }));
  EXPECT_EQ(*f.taken_id(), "");  // nothing on the target: the final sends its own message
  EXPECT_EQ(f.target.count(), 1u);
}

TEST(LiveMessages, TheFinalWaitsForARequestOnItsWayAndAtMostItsLongestWait) {
  live_fixture f(0s);
  f.update("c1\n7", "chat", "a");
  ASSERT_TRUE(f.eventually([&] { return f.target.finished == 1; }));
  f.target.hold = true;
  f.update("c1\n7", "chat", "ab");
  ASSERT_TRUE(f.eventually([&] { return f.target.count() == 2; }));
  f.take("c1\n7", 10s);
  std::this_thread::sleep_for(50ms);  // a window for a wrong early answer, not a wait for the right one
  EXPECT_FALSE(f.taken_id().has_value());
  f.target.hold = false;
  ASSERT_TRUE(f.eventually([&] { return f.taken_id().has_value(); }));
  EXPECT_EQ(*f.taken_id(), "m1");

  f.target.hold = true;
  f.update("c1\n8", "chat", "z");  // never answers while held
  ASSERT_TRUE(f.eventually([&] { return f.target.count() == 3; }));
  {
    std::lock_guard lock(f.taken_mutex);
    f.taken.reset();
  }
  f.take("c1\n8", 100ms);
  ASSERT_TRUE(f.eventually([&] { return f.taken_id().has_value(); }));
  EXPECT_EQ(*f.taken_id(), "");  // not created yet: the final sends its own
  f.target.hold = false;
}

}  // namespace live_messages_test
