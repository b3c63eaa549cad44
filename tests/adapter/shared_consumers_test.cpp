// shared_consumers: one consumer per key, held by the channels bound on it, let go with the last; the host's
// references kept in step (a fake host table that counts per (channel, key) as the host's registry does); several
// threads acquiring, releasing and taking at once.
#include <xconn/adapter/shared_consumers.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace shared_consumers_units {

using xconn::adapter::shared_consumers;

struct consumer {
  explicit consumer(std::string k) : key(std::move(k)) {}
  std::string key;
  std::atomic<int> let_go{0};  // how many times it was handed back to stop
};
using consumers = shared_consumers<consumer>;

// The host's side: references per (channel, key), idempotent like the host's registry.
struct fake_host {
  std::mutex mutex;
  std::set<std::pair<std::string, std::string>> refs;
  int acquires = 0, releases = 0;
  bool refuse = false;
  xconn_host_api api{};

  fake_host() {
    api.struct_size = sizeof api;
    api.api_major = XCONN_PLUGIN_API_MAJOR;
    api.host_ctx = this;
    api.xconn_host_consumer_acquire = [](void* ctx, xconn_str channel, xconn_str key) {
      auto* self = static_cast<fake_host*>(ctx);
      std::lock_guard lock(self->mutex);
      ++self->acquires;
      if (self->refuse) return -1;
      std::string k(key.data, key.size);
      self->refs.emplace(std::string(channel.data, channel.size), k);
      int n = 0;
      for (const auto& r : self->refs) n += r.second == k;
      return n;
    };
    api.xconn_host_consumer_release = [](void* ctx, xconn_str channel, xconn_str key) {
      auto* self = static_cast<fake_host*>(ctx);
      std::lock_guard lock(self->mutex);
      ++self->releases;
      self->refs.erase({std::string(channel.data, channel.size), std::string(key.data, key.size)});
    };
  }
  xconn::sdk::host host() const { return xconn::sdk::host(&api); }
  std::size_t held() {
    std::lock_guard lock(mutex);
    return refs.size();
  }
  bool holds(const std::string& channel, const std::string& key) {
    std::lock_guard lock(mutex);
    return refs.contains({channel, key});
  }
};

auto maker(const std::string& key, int* made = nullptr) {
  return [key, made] {
    if (made) ++*made;
    return std::make_shared<consumer>(key);
  };
}

TEST(shared_consumers, the_first_channel_makes_the_consumer_and_later_ones_share_it) {
  fake_host h;
  consumers pool(h.host());
  int made = 0;
  auto a = pool.acquire("bot-1", "ch-a", maker("bot-1", &made));
  auto b = pool.acquire("bot-1", "ch-b", maker("bot-1", &made));
  EXPECT_TRUE(a.created);
  EXPECT_FALSE(b.created);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(a.consumer, b.consumer);
  EXPECT_EQ(pool.holders("bot-1"), 2u);
  EXPECT_EQ(pool.of("ch-b"), a.consumer);
  EXPECT_EQ(pool.key_of("ch-a"), "bot-1");
  EXPECT_EQ(pool.channels_of("bot-1"), (std::vector<std::string>{"ch-a", "ch-b"}));
  EXPECT_TRUE(h.holds("ch-a", "bot-1") && h.holds("ch-b", "bot-1"));
  auto c = pool.acquire("bot-2", "ch-c", maker("bot-2", &made));
  EXPECT_TRUE(c.created);
  EXPECT_NE(c.consumer, a.consumer);
  EXPECT_EQ(pool.size(), 2u);
}

TEST(shared_consumers, only_the_last_release_hands_the_consumer_back_and_the_host_lets_go_each_time) {
  fake_host h;
  consumers pool(h.host());
  auto a = pool.acquire("bot-1", "ch-a", maker("bot-1"));
  pool.acquire("bot-1", "ch-b", maker("bot-1"));
  EXPECT_EQ(pool.release("ch-a"), nullptr);
  EXPECT_FALSE(h.holds("ch-a", "bot-1"));
  EXPECT_EQ(pool.find("bot-1"), a.consumer);
  EXPECT_EQ(pool.release("ch-b"), a.consumer);
  EXPECT_EQ(pool.find("bot-1"), nullptr);
  EXPECT_EQ(h.held(), 0u);
  EXPECT_EQ(pool.release("ch-b"), nullptr) << "a channel that holds nothing releases nothing";
  EXPECT_TRUE(pool.acquire("bot-1", "ch-a", maker("bot-1")).created) << "after the last left, a new one is made";
}

TEST(shared_consumers, acquiring_again_for_the_same_key_counts_the_channel_once) {
  fake_host h;
  consumers pool(h.host());
  auto first = pool.acquire("bot-1", "ch-a", maker("bot-1"));
  auto again = pool.acquire("bot-1", "ch-a", maker("bot-1"));  // a restore after a sign-in
  EXPECT_FALSE(again.created);
  EXPECT_EQ(pool.holders("bot-1"), 1u);
  EXPECT_EQ(pool.release("ch-a"), first.consumer);
}

TEST(shared_consumers, a_channel_bound_to_another_key_moves_and_hands_back_what_it_left_alone) {
  fake_host h;
  consumers pool(h.host());
  auto old = pool.acquire("irc-a", "ch-1", maker("irc-a"));
  auto moved = pool.acquire("irc-b", "ch-1", maker("irc-b"));
  EXPECT_TRUE(moved.created);
  EXPECT_EQ(moved.released, old.consumer);
  EXPECT_EQ(pool.find("irc-a"), nullptr);
  EXPECT_FALSE(h.holds("ch-1", "irc-a"));
  EXPECT_TRUE(h.holds("ch-1", "irc-b"));

  pool.acquire("irc-b", "ch-2", maker("irc-b"));
  auto back = pool.acquire("irc-a", "ch-2", maker("irc-a"));
  EXPECT_EQ(back.released, nullptr) << "ch-1 still holds irc-b";
  EXPECT_EQ(pool.holders("irc-b"), 1u);
}

TEST(shared_consumers, an_opened_consumer_waits_unheld_until_bound_or_discarded) {
  fake_host h;
  consumers pool(h.host());
  int made = 0;
  auto opened = pool.open("irc-a", maker("irc-a", &made));
  EXPECT_TRUE(opened.created);
  EXPECT_EQ(pool.holders("irc-a"), 0u);
  EXPECT_EQ(h.held(), 0u) << "an unbound consumer is no host reference";
  auto bound = pool.acquire("irc-a", "ch-1", maker("irc-a", &made));
  EXPECT_FALSE(bound.created);
  EXPECT_EQ(bound.consumer, opened.consumer);
  EXPECT_EQ(pool.discard_if_unused("irc-a"), nullptr) << "held: kept";

  auto refused = pool.open("irc-b", maker("irc-b", &made));
  EXPECT_EQ(pool.discard_if_unused("irc-b"), refused.consumer);
  EXPECT_EQ(pool.find("irc-b"), nullptr);
  EXPECT_EQ(made, 2);
}

TEST(shared_consumers, take_removes_a_consumer_whoever_holds_it_without_calling_the_host) {
  fake_host h;
  consumers pool(h.host());
  auto a = pool.acquire("bot-1", "ch-a", maker("bot-1"));
  pool.acquire("bot-1", "ch-b", maker("bot-1"));
  auto releases = h.releases;
  std::vector<std::string> unbound;
  EXPECT_EQ(pool.take("bot-1", &unbound), a.consumer);
  EXPECT_EQ(unbound, (std::vector<std::string>{"ch-a", "ch-b"}));
  EXPECT_EQ(h.releases, releases);
  EXPECT_EQ(pool.of("ch-a"), nullptr);
  EXPECT_EQ(pool.release("ch-a"), nullptr);
  EXPECT_EQ(pool.take("bot-1"), nullptr);
}

TEST(shared_consumers, take_all_empties_it_and_the_host_keeps_its_references_for_the_restore) {
  fake_host h;
  consumers pool(h.host());
  pool.acquire("bot-1", "ch-a", maker("bot-1"));
  pool.acquire("bot-2", "ch-b", maker("bot-2"));
  pool.open("bot-3", maker("bot-3"));
  EXPECT_EQ(pool.take_all().size(), 3u);
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_EQ(pool.of("ch-a"), nullptr);
  EXPECT_EQ(h.held(), 2u);
}

TEST(shared_consumers, a_reference_the_host_refuses_is_reported_and_the_binding_kept) {
  fake_host h;
  h.refuse = true;
  consumers pool(h.host());
  auto got = pool.acquire("bot-1", "ch-a", maker("bot-1"));
  EXPECT_TRUE(got.refused_by_host);
  EXPECT_EQ(pool.of("ch-a"), got.consumer);
}

TEST(shared_consumers, without_a_host_it_counts_alone) {
  consumers pool;
  auto a = pool.acquire("k", "ch", maker("k"));
  EXPECT_FALSE(a.refused_by_host);
  EXPECT_EQ(pool.release("ch"), a.consumer);
}

// Threads bind and unbind channels over a few keys (moving between keys too), and with take_too another thread
// takes consumers away meanwhile (as the host's consumer_stop): every consumer made is handed back exactly once (by
// a last release, a move, a take or take_all) and a channel is never bound to a consumer of another key.
struct churn_result {
  int made = 0, handed_back = 0, twice = 0, wrong = 0;
};
churn_result churn(consumers& pool, bool take_too) {
  constexpr int threads = 8, rounds = 400;
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  std::atomic<int> made{0}, handed_back{0}, twice{0}, wrong{0};
  auto hand_back = [&](const consumers::pointer& c) {
    if (!c) return;
    ++handed_back;
    if (c->let_go.fetch_add(1) != 0) ++twice;
  };
  std::atomic<bool> running{true};
  std::thread stopper([&] {
    for (int i = 0; take_too && running; ++i) hand_back(pool.take(keys[i % keys.size()]));
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        const auto& key = keys[(t + r) % keys.size()];
        auto channel = "ch-" + std::to_string(t) + "-" + std::to_string(r % 5);
        auto got = pool.acquire(key, channel, [&] {
          ++made;
          return std::make_shared<consumer>(key);
        });
        if (got.consumer->key != key) ++wrong;
        hand_back(got.released);
        if (auto now = pool.of(channel); now && now->key != pool.key_of(channel).value_or(now->key)) ++wrong;
        if (r % 3 == 0) hand_back(pool.release(channel));
      }
      for (int c = 0; c < 5; ++c) hand_back(pool.release("ch-" + std::to_string(t) + "-" + std::to_string(c)));
    });
  for (auto& w : workers) w.join();
  running = false;
  stopper.join();
  for (auto& c : pool.take_all()) hand_back(c);
  return {made.load(), handed_back.load(), twice.load(), wrong.load()};
}

TEST(shared_consumers, threads_acquiring_and_releasing_at_once_hand_back_each_consumer_once_and_the_host_balances) {
  fake_host h;
  consumers pool(h.host());
  auto r = churn(pool, false);
  EXPECT_GT(r.made, 0);
  EXPECT_EQ(r.handed_back, r.made);
  EXPECT_EQ(r.twice, 0);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_EQ(h.held(), 0u) << "every channel ended released";
}

TEST(shared_consumers, a_take_racing_the_acquires_and_releases_still_hands_back_each_consumer_once) {
  fake_host h;
  consumers pool(h.host());
  auto r = churn(pool, true);
  EXPECT_GT(r.made, 0);
  EXPECT_EQ(r.handed_back, r.made);
  EXPECT_EQ(r.twice, 0);
  EXPECT_EQ(r.wrong, 0);
}

}  // namespace shared_consumers_units
