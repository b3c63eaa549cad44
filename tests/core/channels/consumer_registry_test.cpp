// Shared-consumer references (spec "Connector Server Offline Lease", third owner): counted per plugin and
// consumer key, idempotent per channel, the last release reported exactly once, and the same counts after a
// restart from LMDB.
#include "core/channels/consumer_registry.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace xconn {
namespace {

std::unique_ptr<store> open_store(const std::string& path) {
  auto s = store::open({path, 1ull << 26, {std::string(consumer_registry::database)}});
  if (!s) ADD_FAILURE() << s.error();
  return s ? std::move(*s) : nullptr;
}

// Every record in the database, as (plugin, channel, key) joined by '|'.
std::set<std::string> records(store& db) {
  std::set<std::string> out;
  db.scan(consumer_registry::database, "", [&](std::string_view key, std::string_view value) {
    EXPECT_EQ(value, "");
    std::string k(key);
    std::replace(k.begin(), k.end(), '\n', '|');
    out.insert(k);
    return true;
  });
  return out;
}

class ConsumerRegistry : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = open_store(dir_.str());
    ASSERT_TRUE(db_);
    reg_ = std::make_unique<consumer_registry>(*db_);
  }

  // A restart: a new store and registry over the same folder.
  void reopen() {
    reg_.reset();
    db_.reset();
    db_ = open_store(dir_.str());
    ASSERT_TRUE(db_);
    reg_ = std::make_unique<consumer_registry>(*db_);
  }

  test::temp_dir dir_;
  std::unique_ptr<store> db_;
  std::unique_ptr<consumer_registry> reg_;
};

TEST_F(ConsumerRegistry, AcquireCountsChannelsAndIsIdempotentPerChannel) {
  EXPECT_EQ(reg_->acquire("echo", "cch_a", "token-1"), 1);
  EXPECT_EQ(reg_->acquire("echo", "cch_a", "token-1"), 1) << "the same channel again is no new reference";
  EXPECT_EQ(reg_->acquire("echo", "cch_b", "token-1"), 2);
  EXPECT_EQ(reg_->acquire("echo", "cch_b", "token-1"), 2);
  EXPECT_EQ(reg_->acquire("echo", "cch_a", "token-2"), 1) << "one channel may hold several keys";
  EXPECT_EQ(reg_->acquire("other", "cch_a", "token-1"), 1) << "plugins count apart";

  EXPECT_EQ(reg_->references("echo", "token-1"), 2u);
  EXPECT_EQ(reg_->references("echo", "token-2"), 1u);
  EXPECT_EQ(reg_->references("other", "token-1"), 1u);
  EXPECT_EQ(reg_->references("echo", "token-3"), 0u);
  EXPECT_EQ(reg_->references("nobody", "token-1"), 0u);
  EXPECT_EQ(reg_->live("echo"), 2u);
  EXPECT_EQ(reg_->live("other"), 1u);
  EXPECT_EQ(reg_->live("nobody"), 0u);
  EXPECT_EQ(reg_->keys("echo"), (std::vector<std::string>{"token-1", "token-2"}));
  EXPECT_EQ(reg_->keys_of("echo", "cch_a"), (std::vector<std::string>{"token-1", "token-2"}));
  EXPECT_EQ(reg_->keys_of("echo", "cch_b"), (std::vector<std::string>{"token-1"}));

  db_->flush();
  EXPECT_EQ(records(*db_), (std::set<std::string>{"echo|cch_a|token-1", "echo|cch_a|token-2", "echo|cch_b|token-1",
                                                  "other|cch_a|token-1"}));
}

TEST_F(ConsumerRegistry, TheLastReleaseIsReportedExactlyOnce) {
  reg_->acquire("echo", "cch_a", "token-1");
  reg_->acquire("echo", "cch_b", "token-1");
  EXPECT_FALSE(reg_->release("echo", "cch_a", "token-1")) << "cch_b still holds it";
  EXPECT_FALSE(reg_->release("echo", "cch_a", "token-1")) << "a repeat is no release";
  EXPECT_EQ(reg_->references("echo", "token-1"), 1u);
  EXPECT_TRUE(reg_->release("echo", "cch_b", "token-1"));
  EXPECT_FALSE(reg_->release("echo", "cch_b", "token-1"));
  EXPECT_EQ(reg_->references("echo", "token-1"), 0u);
  EXPECT_EQ(reg_->live("echo"), 0u);
  EXPECT_TRUE(reg_->keys("echo").empty());

  // Held again after reaching zero: a fresh first reference.
  EXPECT_EQ(reg_->acquire("echo", "cch_c", "token-1"), 1);
  EXPECT_TRUE(reg_->release("echo", "cch_c", "token-1"));

  db_->flush();
  EXPECT_TRUE(records(*db_).empty());
}

TEST_F(ConsumerRegistry, ReleaseOfWhatIsNotHeldIsFalse) {
  EXPECT_FALSE(reg_->release("echo", "cch_a", "token-1"));
  reg_->acquire("echo", "cch_a", "token-1");
  EXPECT_FALSE(reg_->release("echo", "cch_b", "token-1")) << "another channel's";
  EXPECT_FALSE(reg_->release("echo", "cch_a", "token-2")) << "another key";
  EXPECT_FALSE(reg_->release("other", "cch_a", "token-1")) << "another plugin's";
  EXPECT_FALSE(reg_->release("echo", "cch_a", "")) << "an invalid key";
  EXPECT_EQ(reg_->references("echo", "token-1"), 1u);
}

TEST_F(ConsumerRegistry, ReleaseChannelDropsAllItsReferencesAndNamesTheKeysAtZero) {
  reg_->acquire("echo", "cch_a", "token-1");
  reg_->acquire("echo", "cch_a", "token-2");
  reg_->acquire("echo", "cch_a", "token-3");
  reg_->acquire("echo", "cch_b", "token-2");
  reg_->acquire("other", "cch_a", "token-1");

  EXPECT_EQ(reg_->release_channel("echo", "cch_a"), (std::vector<std::string>{"token-1", "token-3"}));
  EXPECT_EQ(reg_->references("echo", "token-2"), 1u);
  EXPECT_EQ(reg_->references("other", "token-1"), 1u) << "another plugin's channel of the same id is untouched";
  EXPECT_TRUE(reg_->keys_of("echo", "cch_a").empty());
  EXPECT_TRUE(reg_->release_channel("echo", "cch_a").empty()) << "a repeat finds nothing";
  EXPECT_FALSE(reg_->release("echo", "cch_a", "token-2")) << "already gone with its channel";
  EXPECT_TRUE(reg_->release_channel("echo", "cch_never").empty());
  EXPECT_TRUE(reg_->release_channel("nobody", "cch_a").empty());

  EXPECT_EQ(reg_->release_channel("echo", "cch_b"), (std::vector<std::string>{"token-2"}));
  EXPECT_EQ(reg_->live("echo"), 0u);
  EXPECT_EQ(reg_->live("other"), 1u);

  db_->flush();
  EXPECT_EQ(records(*db_), (std::set<std::string>{"other|cch_a|token-1"}));
}

TEST_F(ConsumerRegistry, InterleavedChangesKeepTheCounts) {
  // A model of the same changes, checked after each step.
  std::map<std::string, std::set<std::string>> model;  // key -> channels
  auto check = [&](const std::string& step) {
    std::size_t live = 0;
    for (const auto& [key, channels] : model) {
      EXPECT_EQ(reg_->references("echo", key), channels.size()) << step << " " << key;
      if (!channels.empty()) ++live;
    }
    EXPECT_EQ(reg_->live("echo"), live) << step;
  };
  const std::vector<std::string> channels = {"cch_a", "cch_b", "cch_c", "cch_d"};
  const std::vector<std::string> keys = {"k1", "k2", "k3"};
  unsigned seed = 7;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
  int zeroes_reported = 0, zeroes_expected = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string& ch = channels[next() % channels.size()];
    const std::string& key = keys[next() % keys.size()];
    switch (next() % 5) {
      case 0:
      case 1: {
        model[key].insert(ch);
        EXPECT_EQ(reg_->acquire("echo", ch, key), static_cast<int>(model[key].size()));
        break;
      }
      case 2:
      case 3: {
        bool held = model[key].erase(ch) > 0;
        bool last = held && model[key].empty();
        zeroes_expected += last;
        bool got = reg_->release("echo", ch, key);
        zeroes_reported += got;
        EXPECT_EQ(got, last) << "step " << i;
        break;
      }
      default: {
        std::vector<std::string> expected;
        for (auto& [k, holders] : model) {
          if (holders.erase(ch) > 0 && holders.empty()) expected.push_back(k);
        }
        zeroes_expected += static_cast<int>(expected.size());
        auto got = reg_->release_channel("echo", ch);
        zeroes_reported += static_cast<int>(got.size());
        EXPECT_EQ(got, expected) << "step " << i;
      }
    }
    check("step " + std::to_string(i));
  }
  EXPECT_EQ(zeroes_reported, zeroes_expected);
  EXPECT_GT(zeroes_expected, 10);

  // The store holds exactly the model, and a restart reads the same counts back.
  db_->flush();
  std::set<std::string> expected_records;
  std::size_t references = 0;
  for (const auto& [key, holders] : model) {
    for (const auto& ch : holders) expected_records.insert("echo|" + ch + "|" + key);
    references += holders.size();
  }
  EXPECT_EQ(records(*db_), expected_records);
  reopen();
  EXPECT_EQ(reg_->load(), references);
  check("after reload");
}

TEST_F(ConsumerRegistry, ManyThreadsEachLastReleaseReportedOnce) {
  constexpr int threads = 8, rounds = 500;
  std::atomic<int> firsts{0}, lasts{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::string ch = "cch_" + std::to_string(t);
      for (int r = 0; r < rounds; ++r) {
        std::string key = "k" + std::to_string(r % 4);
        if (reg_->acquire("echo", ch, key) == 1) ++firsts;
        if (r % 3 == 0) {
          for (const auto& k : reg_->release_channel("echo", ch)) {
            (void)k;
            ++lasts;
          }
        } else if (reg_->release("echo", ch, key)) {
          ++lasts;
        }
      }
      for (const auto& k : reg_->release_channel("echo", ch)) {
        (void)k;
        ++lasts;
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(reg_->live("echo"), 0u);
  EXPECT_EQ(firsts.load(), lasts.load()) << "each consumer started is stopped exactly once";
  db_->flush();
  EXPECT_TRUE(records(*db_).empty());
}

TEST_F(ConsumerRegistry, ReloadFromLmdbGivesTheSameCounts) {
  reg_->acquire("echo", "cch_a", "token-1");
  reg_->acquire("echo", "cch_b", "token-1");
  reg_->acquire("echo", "cch_b", "token-2");
  reg_->acquire("echo", "cch_c", "token-3");
  reg_->release("echo", "cch_c", "token-3");
  reg_->acquire("tg", "cch_x", "bot-42");
  reopen();
  EXPECT_EQ(reg_->live("echo"), 0u) << "nothing before load";
  EXPECT_EQ(reg_->load(), 4u);
  EXPECT_EQ(reg_->references("echo", "token-1"), 2u);
  EXPECT_EQ(reg_->references("echo", "token-2"), 1u);
  EXPECT_EQ(reg_->references("echo", "token-3"), 0u);
  EXPECT_EQ(reg_->references("tg", "bot-42"), 1u);
  EXPECT_EQ(reg_->live("echo"), 2u);
  EXPECT_EQ(reg_->keys_of("echo", "cch_b"), (std::vector<std::string>{"token-1", "token-2"}));
  using holder = std::pair<std::string, std::string>;
  EXPECT_EQ(reg_->channels(), (std::vector<holder>{{"echo", "cch_a"}, {"echo", "cch_b"}, {"tg", "cch_x"}}))
      << "cch_c released its only key";

  // After the reload: idempotent acquire, and the last release still found once.
  EXPECT_EQ(reg_->acquire("echo", "cch_a", "token-1"), 2);
  EXPECT_FALSE(reg_->release("echo", "cch_a", "token-1"));
  EXPECT_EQ(reg_->release_channel("echo", "cch_b"), (std::vector<std::string>{"token-1", "token-2"}));
  EXPECT_EQ(reg_->live("echo"), 0u);
  reopen();
  EXPECT_EQ(reg_->load(), 1u);
  EXPECT_EQ(reg_->live("echo"), 0u);
  EXPECT_EQ(reg_->live("tg"), 1u);
}

TEST_F(ConsumerRegistry, LoadSkipsMalformedRecords) {
  const std::string db(consumer_registry::database);
  ASSERT_FALSE(db_->write_sync(write_batch{}
                                   .put(db, "echo\ncch_a\ntoken-1", "")
                                   .put(db, "no-separators", "")
                                   .put(db, "echo\ncch_a", "")
                                   .put(db, "echo\n\ntoken-2", "")
                                   .put(db, "echo\ncch_a\n", "")
                                   .put(db, std::string("echo\ncch_a\nbad\x01key"), "")));
  EXPECT_EQ(reg_->load(), 1u);
  EXPECT_EQ(reg_->references("echo", "token-1"), 1u);
  EXPECT_EQ(reg_->live("echo"), 1u);
}

TEST_F(ConsumerRegistry, BadKeysAreRefusedAndNothingIsStored) {
  const std::vector<std::string> bad = {
      "",
      std::string(129, 'k'),
      "line\nbreak",
      "tab\there",
      std::string("nul\0byte", 8),
      "del\x7f",
      "caf\xc3\xa9",  // printable, but not ASCII
  };
  for (const auto& key : bad) {
    EXPECT_EQ(reg_->acquire("echo", "cch_a", key), -1) << key;
    EXPECT_FALSE(reg_->release("echo", "cch_a", key));
  }
  EXPECT_EQ(reg_->acquire("echo", "", "token-1"), -1) << "an empty channel id";
  EXPECT_EQ(reg_->acquire("echo", "cch\na", "token-1"), -1) << "a channel id with the separator";
  EXPECT_EQ(reg_->acquire("", "cch_a", "token-1"), -1) << "an empty plugin id";
  EXPECT_EQ(reg_->live("echo"), 0u);

  EXPECT_EQ(reg_->acquire("echo", "cch_a", std::string(128, 'k')), 1) << "128 bytes is the limit";
  EXPECT_EQ(reg_->acquire("echo", "cch_a", " !~"), 1) << "space and ~ are printable";
  EXPECT_TRUE(consumer_registry::valid_key(std::string(128, '~')));
  EXPECT_FALSE(consumer_registry::valid_key(std::string(129, '~')));

  db_->flush();
  EXPECT_EQ(records(*db_).size(), 2u);
}

TEST_F(ConsumerRegistry, AFailedCommitIsLoggedNotThrown) {
  // A store without the consumers database: each write fails on the writer thread, memory still counts.
  test::temp_dir other;
  auto bare = store::open({other.str(), 1ull << 26, {"a"}});
  ASSERT_TRUE(bare);
  consumer_registry reg(**bare);
  EXPECT_EQ(reg.acquire("echo", "cch_a", "token-1"), 1);
  EXPECT_TRUE(reg.release("echo", "cch_a", "token-1"));
  (*bare)->flush();
}

}  // namespace
}  // namespace xconn
