#include "core/store/store.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using xconn::store;
using xconn::store_options;
using xconn::write_batch;

std::unique_ptr<store> open_store(const std::string& path, std::uint64_t map = 1ull << 30) {
  auto s = store::open({path, map, {"a", "b"}});
  if (!s) ADD_FAILURE() << s.error();
  return s ? std::move(*s) : nullptr;
}

// Counts completions; waits for a count with a deadline.
struct completions {
  std::mutex m;
  std::condition_variable cv;
  int ok = 0, failed = 0;
  store::completion make() {
    return [this](std::error_code ec) {
      std::lock_guard lock(m);
      ++(ec ? failed : ok);
      cv.notify_all();
    };
  }
  bool wait_for(int n, std::chrono::seconds deadline = std::chrono::seconds(30)) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, deadline, [&] { return ok + failed >= n; });
  }
};

// Holds the store's writer inside the completion of a first write ("a"/"first") until release(): requests
// written meanwhile pile up in its queue.
class writer_hold {
 public:
  explicit writer_hold(store& s) : store_(s) {
    s.write(write_batch{}.put("a", "first", "1"), [this](std::error_code) {
      blocked_ = true;
      std::lock_guard wait(gate_);
    });
  }
  ~writer_hold() {  // also when a test stops early: the completion must be over before gate_ goes
    release();
    store_.flush();
  }
  bool wait_blocked() { return xconn::test::wait_until([&] { return blocked_.load(); }); }
  void release() {
    if (lock_.owns_lock()) lock_.unlock();
  }

 private:
  store& store_;
  std::mutex gate_;
  std::unique_lock<std::mutex> lock_{gate_};
  std::atomic<bool> blocked_{false};
};

TEST(store, put_get_erase) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->write_sync(write_batch{}.put("a", "k1", "v1").put("b", "k1", "other")));
  EXPECT_EQ(s->get("a", "k1"), "v1");
  EXPECT_EQ(s->get("b", "k1"), "other");
  EXPECT_EQ(s->get("a", "missing"), std::nullopt);
  EXPECT_FALSE(s->write_sync(write_batch{}.put("a", "k1", "v2")));
  EXPECT_EQ(s->get("a", "k1"), "v2");
  EXPECT_FALSE(s->write_sync(write_batch{}.erase("a", "k1")));
  EXPECT_EQ(s->get("a", "k1"), std::nullopt);
  EXPECT_FALSE(s->write_sync(write_batch{}.erase("a", "never-there")));  // not an error
  std::string binary("\0x\xff", 3);
  EXPECT_FALSE(s->write_sync(write_batch{}.put("a", binary, binary)));
  EXPECT_EQ(s->get("a", binary), binary);
}

TEST(store, folder_is_created_owner_only) {
  xconn::test::temp_dir dir;
  auto path = (dir.path() / "nested" / "db").string();
  ASSERT_TRUE(open_store(path));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(store, open_failure_names_path_and_reason) {
  xconn::test::temp_dir dir;
  auto file = dir.path() / "a-file";
  xconn::test::write_file(file, "x");
  auto s = store::open({(file / "db").string(), 1 << 20, {"a"}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find(file.string()), std::string::npos) << s.error();
  EXPECT_GT(s.error().size(), (file / "db").string().size() + 20) << s.error();
}

TEST(store, scan_prefix_order_and_stop) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  write_batch b;
  for (auto k : {"p/2", "p/1", "p/3", "q/1", "o/9", "p"}) b.put("a", k, std::string("v") + k);
  ASSERT_FALSE(s->write_sync(std::move(b)));

  std::vector<std::string> keys;
  s->scan("a", "p/", [&](std::string_view k, std::string_view v) {
    EXPECT_EQ(v, "v" + std::string(k));
    keys.emplace_back(k);
    return true;
  });
  EXPECT_EQ(keys, (std::vector<std::string>{"p/1", "p/2", "p/3"}));

  keys.clear();
  s->scan("a", "p/", [&](std::string_view k, std::string_view) {
    keys.emplace_back(k);
    return keys.size() < 2;
  });
  EXPECT_EQ(keys, (std::vector<std::string>{"p/1", "p/2"}));

  int all = 0;
  s->scan("a", "", [&](std::string_view, std::string_view) { return ++all, true; });
  EXPECT_EQ(all, 6);
  int none = 0;
  s->scan("a", "z", [&](std::string_view, std::string_view) { return ++none, true; });
  EXPECT_EQ(none, 0);
}

TEST(store, unknown_database) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->get("nope", "k"), std::nullopt);
  int visited = 0;
  s->scan("nope", "", [&](std::string_view, std::string_view) { return ++visited, true; });
  EXPECT_EQ(visited, 0);
  // The whole batch fails, including its valid op.
  auto ec = s->write_sync(write_batch{}.put("a", "k", "v").put("nope", "k", "v"));
  EXPECT_EQ(ec, std::errc::invalid_argument);
  EXPECT_EQ(s->get("a", "k"), std::nullopt);
}

TEST(store, reopen_keeps_data) {
  xconn::test::temp_dir dir;
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s);
    // Asynchronous, never waited on: the destructor must commit it.
    s->write(write_batch{}.put("a", "k", "v"));
  }
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->get("a", "k"), "v");
}

// A data.mdb cut short (a copy that stopped, a full disk): the open is refused with the reason, where mapping it
// would have ended the process with SIGBUS at the first read past the file's end.
TEST(store, a_data_file_cut_short_is_refused_with_the_reason) {
  xconn::test::temp_dir dir;
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s);
    write_batch batch;
    for (int i = 0; i < 2000; ++i) batch.put("a", "key-" + std::to_string(i), std::string(500, 'v'));
    completions done;
    s->write(std::move(batch), done.make());
    ASSERT_TRUE(done.wait_for(1));
  }
  auto data = dir.path() / "data.mdb";
  auto full = std::filesystem::file_size(data);
  ASSERT_GT(full, 100'000u);
  std::filesystem::resize_file(data, full / 2);
  auto s = store::open({dir.str(), 1ull << 30, {"a", "b"}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("cut short"), std::string::npos) << s.error();
  EXPECT_NE(s.error().find(dir.str()), std::string::npos) << s.error();
}

TEST(store, group_commit) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  constexpr int threads = 8, per_thread = 500;
  completions done;
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i)
        s->write(write_batch{}.put("a", std::to_string(t) + "/" + std::to_string(i), std::to_string(i)),
                 done.make());
    });
  for (auto& w : writers) w.join();
  ASSERT_TRUE(done.wait_for(threads * per_thread));
  EXPECT_EQ(done.ok, threads * per_thread);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < per_thread; ++i)
      ASSERT_EQ(s->get("a", std::to_string(t) + "/" + std::to_string(i)), std::to_string(i));
  EXPECT_LT(s->commit_count(), static_cast<std::uint64_t>(threads * per_thread));
  EXPECT_GE(s->commit_count(), 1u);
}

TEST(store, failing_request_fails_alone_in_its_batch) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  // Hold the writer inside a completion so that the next requests pile up into one transaction.
  writer_hold hold(*s);
  ASSERT_TRUE(hold.wait_blocked());
  const auto commits_before = s->commit_count();

  std::error_code ok1{std::make_error_code(std::errc::io_error)}, ok2 = ok1, unknown, empty_key, long_key;
  s->write(write_batch{}.put("a", "x", "1"), [&](std::error_code ec) { ok1 = ec; });
  s->write(write_batch{}.put("a", "y", "1").put("nope", "k", "v"), [&](std::error_code ec) { unknown = ec; });
  // LMDB would refuse the empty key (MDB_BAD_VALSIZE): the whole request fails, its first put included.
  s->write(write_batch{}.put("a", "z", "1").put("a", "", "v"), [&](std::error_code ec) { empty_key = ec; });
  s->write(write_batch{}.put("a", "v", "1").put("a", std::string(600, 'k'), "v"),  // past LMDB's key limit
           [&](std::error_code ec) { long_key = ec; });
  s->write(write_batch{}.put("b", "w", "1").erase("a", "first"), [&](std::error_code ec) { ok2 = ec; });
  hold.release();
  s->flush();

  EXPECT_FALSE(ok1);
  EXPECT_FALSE(ok2);
  EXPECT_EQ(unknown, std::errc::invalid_argument);
  ASSERT_TRUE(empty_key);
  EXPECT_STREQ(empty_key.category().name(), "lmdb");
  EXPECT_FALSE(empty_key.message().empty());
  EXPECT_EQ(long_key, empty_key);
  EXPECT_EQ(s->commit_count(), commits_before + 1);  // the five requests shared one commit
  EXPECT_EQ(s->get("a", "x"), "1");
  EXPECT_EQ(s->get("b", "w"), "1");
  EXPECT_EQ(s->get("a", "first"), std::nullopt);
  EXPECT_EQ(s->get("a", "y"), std::nullopt);
  EXPECT_EQ(s->get("a", "z"), std::nullopt);  // refused with its failing sibling op
  EXPECT_EQ(s->get("a", "v"), std::nullopt);
}

// Thousands of requests queued at once are committed in a few transactions of a bounded size, none lost.
TEST(store, a_large_pile_up_commits_in_bounded_transactions) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  writer_hold hold(*s);
  ASSERT_TRUE(hold.wait_blocked());
  const auto commits_before = s->commit_count();
  constexpr int n = 5000;
  completions done;
  for (int i = 0; i < n; ++i)
    s->write(write_batch{}.put("a", "k" + std::to_string(i), "v").put("b", "k" + std::to_string(i), "w"),
             done.make());
  hold.release();
  ASSERT_TRUE(done.wait_for(n));
  EXPECT_EQ(done.ok, n);
  EXPECT_EQ(s->commit_count(), commits_before + 5);  // 1024 requests a transaction at most
  for (int i = 0; i < n; i += 97) ASSERT_EQ(s->get("b", "k" + std::to_string(i)), "w") << i;
}

TEST(store, a_gradual_erase_commits_one_bounded_step_at_a_time) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  const std::size_t n = 2 * store::erase_step_keys + 76;
  write_batch fill;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < n; ++i) {
    keys.push_back("k" + std::to_string(i));
    fill.put("a", keys.back(), "v");
  }
  keys.push_back("never-written");  // erasing a missing key is no error
  fill.put("b", "k0", "kept");
  ASSERT_FALSE(s->write_sync(std::move(fill)));
  const auto commits_before = s->commit_count();

  std::promise<std::error_code> erased;
  auto result = erased.get_future();
  s->erase_gradually("a", std::move(keys), [&](std::error_code ec) { erased.set_value(ec); });
  ASSERT_EQ(result.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_FALSE(result.get());
  // Three steps (512, 512, 77 keys), each its own transaction: never one transaction of them all.
  EXPECT_EQ(s->commit_count(), commits_before + 3);
  std::size_t left = 0;
  s->scan("a", "", [&](std::string_view, std::string_view) { return ++left, true; });
  EXPECT_EQ(left, 0u);
  EXPECT_EQ(s->get("b", "k0"), "kept");
}

TEST(store, a_gradual_erase_into_an_unknown_database_reports_its_error_once) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  std::vector<std::string> keys(store::erase_step_keys + 1, "k");
  completions done;
  s->erase_gradually("nope", std::move(keys), done.make());
  ASSERT_TRUE(done.wait_for(1));
  s->flush();
  EXPECT_EQ(done.failed, 1);
  EXPECT_EQ(done.ok, 0);
}

TEST(store, completion_runs_after_commit) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  completions done;
  std::atomic<int> seen{0};
  constexpr int n = 200;
  for (int i = 0; i < n; ++i) {
    auto key = "k" + std::to_string(i);
    s->write(write_batch{}.put("a", key, "v"), [&, key, c = done.make()](std::error_code ec) {
      if (!ec && s->get("a", key) == "v") ++seen;  // a fresh read txn already sees the commit
      c(ec);
    });
  }
  ASSERT_TRUE(done.wait_for(n));
  EXPECT_EQ(seen, n);
}

TEST(store, map_grows_when_full) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str(), 1 << 20);
  ASSERT_TRUE(s);
  const auto initial = s->map_size();
  const std::string value(64 * 1024, 'x');
  constexpr int n = 320;  // 20 MiB
  completions done;
  for (int i = 0; i < n; ++i) s->write(write_batch{}.put("a", std::to_string(i), value), done.make());
  ASSERT_TRUE(done.wait_for(n));
  EXPECT_EQ(done.ok, n);
  EXPECT_GT(s->map_size(), initial);
  EXPECT_GE(s->map_size(), 20u << 20);
  for (int i = 0; i < n; ++i) ASSERT_EQ(s->get("a", std::to_string(i)), value) << i;
  // Readers running while the writer grows the map.
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) EXPECT_EQ(s->get("a", "0"), value);
  });
  const auto before = s->map_size();
  for (int i = 0; i < 320; ++i) EXPECT_FALSE(s->write_sync(write_batch{}.put("b", std::to_string(i), value)));
  stop = true;
  reader.join();
  EXPECT_GT(s->map_size(), before);
}

TEST(store, oversized_value) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  std::string big(8 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  EXPECT_FALSE(s->write_sync(write_batch{}.put("a", "big", big)));
  EXPECT_EQ(s->get("a", "big"), big);
}

TEST(store, write_after_flush_and_from_a_completion) {
  xconn::test::temp_dir dir;
  auto s = open_store(dir.str());
  ASSERT_TRUE(s);
  s->flush();  // nothing pending: returns
  completions done;
  s->write(write_batch{}.put("a", "1", "v"), [&, c = done.make()](std::error_code ec) {
    s->write(write_batch{}.put("a", "2", "v"), c);  // re-entrant: the queue lock is not held here
    c(ec);
  });
  ASSERT_TRUE(done.wait_for(2));
  EXPECT_EQ(done.ok, 2);
  EXPECT_EQ(s->get("a", "2"), "v");
}

// A writer process killed mid-stream leaves its reader slot and possibly the writer lock behind; the next
// open must recover both and keep every commit it reported.
TEST(store, reopen_after_killed_writer) {
  xconn::test::temp_dir dir;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto s = store::open({dir.str(), 1 << 20, {"a"}});
    if (!s) ::_exit(2);
    for (std::uint64_t i = 0; i < 1'000'000; ++i) {
      if ((*s)->write_sync(write_batch{}.put("a", "k" + std::to_string(i), std::string(512, 'v')))) ::_exit(3);
      if (::write(fds[1], &i, sizeof i) != sizeof i) ::_exit(4);
    }
    ::_exit(5);  // never expected to get here before the kill
  }
  ::close(fds[1]);

  auto read_index = [&](std::uint64_t& out, int timeout_ms) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return false;
    return ::read(fds[0], &out, sizeof out) == sizeof out;
  };
  std::uint64_t last = 0;
  int got = 0;
  while (got < 50 && read_index(last, 10'000)) ++got;
  ::kill(child, SIGKILL);  // whatever happened: the child must not outlive the test
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(got, 50) << "the child stopped reporting; status " << status;
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  for (std::uint64_t i; read_index(i, 0);) last = i;  // indices written before the kill landed
  ::close(fds[0]);

  auto s = open_store(dir.str(), 1 << 20);
  ASSERT_TRUE(s);
  for (std::uint64_t i = 0; i <= last; ++i) ASSERT_EQ(s->get("a", "k" + std::to_string(i)), std::string(512, 'v')) << i;
  EXPECT_FALSE(s->write_sync(write_batch{}.put("a", "after", "ok")));
  EXPECT_EQ(s->get("a", "after"), "ok");
}

}  // namespace
