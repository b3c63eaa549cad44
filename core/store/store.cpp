#include "core/store/store.hpp"
#include "core/store/data_file_check.hpp"
#include "core/store/disk_reserve.hpp"
#include "core/base/histogram.hpp"
#include "core/base/thread_name.hpp"

#include <lmdb.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>
#include <vector>

namespace xconn {

namespace {

class lmdb_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "lmdb"; }
  std::string message(int code) const override { return mdb_strerror(code); }
};

const std::error_category& lmdb_category() {
  static const lmdb_category_impl category;
  return category;
}

// LMDB returns either its own negative MDB_* codes or a plain errno (ENOSPC, EIO, ENOMEM...); the latter
// keep the generic category so callers can compare them with std::errc.
std::error_code to_error(int rc) {
  if (rc == MDB_SUCCESS) return {};
  if (rc > 0) return {rc, std::generic_category()};
  return {rc, lmdb_category()};
}

MDB_val to_val(std::string_view s) { return {s.size(), const_cast<char*>(s.data())}; }
std::string_view to_view(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

}  // namespace

write_batch& write_batch::put(std::string database, std::string key, std::string value) {
  ops.push_back({store_op::kind::put, std::move(database), std::move(key), std::move(value)});
  return *this;
}

write_batch& write_batch::erase(std::string database, std::string key) {
  ops.push_back({store_op::kind::erase, std::move(database), std::move(key), {}});
  return *this;
}

struct store::impl {
  struct request {
    write_batch batch;
    completion done;
  };

  MDB_env* env = nullptr;
  std::map<std::string, MDB_dbi, std::less<>> dbis;  // fixed after open: read without a lock

  // mdb_env_set_mapsize needs no live transaction in this process: every transaction (read txns and the
  // writer's txn) holds this shared; a resize holds it exclusive.
  std::shared_mutex txn_guard;
  std::atomic<std::uint64_t> map_bytes{0};
  std::atomic<std::uint64_t> commits{0};
  histogram commit_seconds;                               // one transaction, begin to durable commit
  histogram commit_writes{histogram::count_bounds};       // requests (write batches) per transaction
  // Requests per transaction: enough to share one sync among many writers, few enough that the first of them
  // are answered without waiting for everything queued behind them.
  static constexpr std::size_t max_requests_per_commit = 1024;
  std::size_t max_key_bytes = 511;  // mdb_env_get_maxkeysize, read at open

  // The writer thread's only: a full disk turns the store delete-only until the reserve is taken again.
  std::string path;
  std::unique_ptr<disk_reserve> reserve;
  bool delete_only = false;
  std::chrono::steady_clock::time_point last_reserve_try{};
  static constexpr std::chrono::seconds reserve_retry{10};

  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::vector<request> queue;
  bool stopping = false;
  std::thread writer;
  std::thread copier;  // copy_compacted's; joined before the next copy and at close
  std::atomic<bool> copying{false};

  ~impl() {
    if (copier.joinable()) copier.join();
    if (env) mdb_env_close(env);
  }

  const MDB_dbi* find_dbi(std::string_view name) const {
    auto it = dbis.find(name);
    return it == dbis.end() ? nullptr : &it->second;
  }

  void refresh_map_size() {
    MDB_envinfo info{};
    if (mdb_env_info(env, &info) == MDB_SUCCESS) map_bytes = info.me_mapsize;
  }

  // Another process grew the map (MDB_MAP_RESIZED): adopt its size. Caller holds no transaction.
  void adopt_map_size() {
    std::unique_lock lock(txn_guard);
    mdb_env_set_mapsize(env, 0);
    refresh_map_size();
  }

  // Doubles the map after MDB_MAP_FULL. Caller holds no transaction. False when the OS refuses.
  bool grow_map() {
    std::unique_lock lock(txn_guard);
    if (mdb_env_set_mapsize(env, static_cast<size_t>(map_bytes.load()) * 2) != MDB_SUCCESS) return false;
    refresh_map_size();
    return true;
  }

  // Begins a transaction with `lock` (unlocked on entry) held shared for its lifetime; retries once the
  // map was grown by another process.
  int begin(unsigned flags, MDB_txn** txn, std::shared_lock<std::shared_mutex>& lock) {
    for (int attempt = 0;; ++attempt) {
      lock = std::shared_lock(txn_guard);
      int rc = mdb_txn_begin(env, nullptr, flags, txn);
      if (rc != MDB_MAP_RESIZED || attempt == 3) return rc;
      lock.unlock();
      adopt_map_size();
    }
  }

  // What LMDB would refuse in a request on its own (an unknown database, an empty or over-long key) fails that
  // request alone, before any transaction: inside one, the only failures left are the environment's. (A child
  // transaction per request would isolate them too, but costs a 2 MiB dirty list each and makes a large group
  // commit quadratic.)
  std::error_code check(const write_batch& batch) const {
    for (const auto& op : batch.ops) {
      if (!find_dbi(op.database)) return std::make_error_code(std::errc::invalid_argument);
      if (op.key.empty() || op.key.size() > max_key_bytes) return to_error(MDB_BAD_VALSIZE);
    }
    return {};
  }

  int apply(MDB_txn* txn, const write_batch& batch) {
    for (const auto& op : batch.ops) {
      MDB_dbi dbi = *find_dbi(op.database);
      MDB_val key = to_val(op.key);
      int rc;
      if (op.what == store_op::kind::put) {
        MDB_val value = to_val(op.value);
        rc = mdb_put(txn, dbi, &key, &value, 0);
      } else {
        rc = mdb_del(txn, dbi, &key, nullptr);
        if (rc == MDB_NOTFOUND) rc = MDB_SUCCESS;
      }
      if (rc != MDB_SUCCESS) return rc;
    }
    return MDB_SUCCESS;
  }

  static void finish(request& r, std::error_code ec) {
    if (!r.done) return;
    // A throwing completion must not kill the writer thread (that would terminate the process).
    try {
      r.done(ec);
    } catch (...) {
    }
  }

  // Commits work[first, ...) in one transaction, at most max_requests_per_commit of it and as far as it fits;
  // completes those requests and returns how many it completed (at least one).
  std::size_t commit_some(std::vector<request>& work, std::size_t first) {
    std::size_t count = std::min(work.size() - first, max_requests_per_commit);
    std::vector<std::error_code> results;
    for (;;) {
      auto started = std::chrono::steady_clock::now();
      results.assign(count, {});
      std::shared_lock<std::shared_mutex> lock;
      MDB_txn* txn = nullptr;
      int rc = begin(0, &txn, lock);
      if (rc == MDB_SUCCESS) {
        for (std::size_t i = 0; i < count && rc == MDB_SUCCESS; ++i)
          if (!(results[i] = check(work[first + i].batch))) rc = apply(txn, work[first + i].batch);
        if (rc != MDB_SUCCESS)
          mdb_txn_abort(txn);
        else
          rc = mdb_txn_commit(txn);  // frees txn whatever the result
      }
      lock.unlock();
      if (rc == MDB_MAP_FULL && grow_map()) continue;  // nothing of this try was kept: redo it all
      // The dirty-page limit of one transaction: try again with fewer; a request that alone exceeds it fails alone.
      if (rc == MDB_TXN_FULL && count > 1) {
        count /= 2;
        continue;
      }
      if (rc == MDB_TXN_FULL) {
        finish(work[first], to_error(rc));
        return 1;
      }
      if (!delete_only && reserve && disk_full(rc)) {
        go_delete_only();
        return 0;  // nothing completed: the caller sorts the work again
      }
      if (rc != MDB_SUCCESS) {
        // The environment failed (begin, a write, commit, or no room to grow): everything pending fails with it.
        for (std::size_t i = first; i < work.size(); ++i) finish(work[i], to_error(rc));
        return work.size() - first;
      }
      ++commits;
      commit_seconds.observe(std::chrono::steady_clock::now() - started);
      commit_writes.observe(static_cast<double>(count));
      for (std::size_t i = 0; i < count; ++i) finish(work[first + i], results[i]);
      return count;
    }
  }

  // LMDB reports a write cut short by a full disk as EIO: then the file system's free space decides.
  bool disk_full(int rc) const {
    if (rc == ENOSPC || rc == EDQUOT) return true;
    struct statvfs fs {};
    return rc == EIO && ::statvfs(path.c_str(), &fs) == 0 &&
           static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize < (1u << 20);
  }

  void go_delete_only() {
    reserve->release();
    delete_only = true;
    last_reserve_try = std::chrono::steady_clock::now();
    spdlog::error("store: the disk is full; released the {} MiB reserve: until that much is free again the store "
                  "only deletes (uploads answer 507, other writes fail as retryable)",
                  reserve->bytes() >> 20);
  }

  // Delete-only: fails every request that puts, unless the reserve can be taken again (tried at most once per
  // reserve_retry); the erase-only ones stay in work.
  void refuse_puts(std::vector<request>& work) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_reserve_try >= reserve_retry) {
      last_reserve_try = now;
      if (reserve->take()) {
        delete_only = false;
        spdlog::info("store: disk space is back: the reserve is held again and writes are accepted");
        return;
      }
    }
    auto puts = [](const request& r) {
      for (const auto& op : r.batch.ops)
        if (op.what == store_op::kind::put) return true;
      return false;
    };
    auto full = std::make_error_code(std::errc::no_space_on_device);
    for (auto& r : work)
      if (puts(r)) finish(r, full);
    std::erase_if(work, puts);
  }

  // Commits work; when the disk fills on the way, fails what puts and commits what only deletes.
  void commit_all(std::vector<request>& work) {
    for (;;) {
      if (delete_only) refuse_puts(work);
      std::size_t done = 0;
      while (done < work.size()) {
        auto n = commit_some(work, done);
        if (n == 0) break;  // the disk filled just now
        done += n;
      }
      if (done == work.size()) return;
      work.erase(work.begin(), work.begin() + static_cast<std::ptrdiff_t>(done));
    }
  }

  void run_writer() {
    std::vector<request> work;
    for (;;) {
      {
        std::unique_lock lock(queue_mutex);
        queue_cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;  // stopping and drained
        work.swap(queue);
      }
      bool any_ops = false;
      for (const auto& r : work) any_ops = any_ops || !r.batch.ops.empty();
      if (!any_ops) {  // only flush markers: no transaction to commit
        for (auto& r : work) finish(r, {});
      } else {
        commit_all(work);
      }
      work.clear();
    }
  }
};

boost::system::result<std::unique_ptr<store>, std::string> store::open(const store_options& options) {
  auto fail = [&](const std::string& reason) {
    return "cannot open the store at " + options.path + ": " + reason;
  };
  std::error_code fs_error;
  if (!std::filesystem::exists(options.path, fs_error)) {
    std::filesystem::create_directories(options.path, fs_error);
    if (fs_error) return fail(fs_error.message());
    // The store holds every durable fact of the host (tokens included): owner only.
    ::chmod(options.path.c_str(), 0700);
  }

  auto p = std::make_unique<impl>();
  int rc = mdb_env_create(&p->env);
  if (rc != MDB_SUCCESS) {
    p->env = nullptr;
    return fail(mdb_strerror(rc));
  }
  if ((rc = mdb_env_set_maxdbs(p->env, 64)) != MDB_SUCCESS ||
      (rc = mdb_env_set_mapsize(p->env, static_cast<size_t>(options.map_size_bytes))) != MDB_SUCCESS)
    return fail(mdb_strerror(rc));
  // Before LMDB maps the file: a reachable page past its end would end the process with SIGBUS at the first read
  // (data_file_check.hpp); a sparse tail of free pages is filled in.
  if (auto data = prepare_data_file((std::filesystem::path(options.path) / "data.mdb").string()); !data)
    return fail(data.error());
  // MDB_NOTLS: read transactions are tied to the txn object, not the thread, so any thread may read.
  if ((rc = mdb_env_open(p->env, options.path.c_str(), MDB_NOTLS, 0600)) != MDB_SUCCESS)
    return fail(mdb_strerror(rc));  // ~impl closes the env, as mdb_env_open requires on failure
  p->max_key_bytes = static_cast<std::size_t>(mdb_env_get_maxkeysize(p->env));
  p->path = options.path;
  if (options.reserve_bytes) {
    p->reserve = std::make_unique<disk_reserve>(options.path + "/reserve", options.reserve_bytes);
    // Started on a full disk: delete-only from the first write.
    if (!p->reserve->take()) p->delete_only = true;
    if (!p->reserve->error().empty()) return fail(p->reserve->error());
    if (p->delete_only)
      spdlog::error("store: cannot reserve {} MiB beside the store: the disk is full; the store only deletes until "
                    "that much is free", options.reserve_bytes >> 20);
  }
  int stale = 0;
  if ((rc = mdb_reader_check(p->env, &stale)) != MDB_SUCCESS) return fail(mdb_strerror(rc));

  std::shared_lock<std::shared_mutex> lock;
  MDB_txn* txn = nullptr;
  if ((rc = p->begin(0, &txn, lock)) != MDB_SUCCESS) return fail(mdb_strerror(rc));
  for (const auto& name : options.databases) {
    MDB_dbi dbi;
    if ((rc = mdb_dbi_open(txn, name.c_str(), MDB_CREATE, &dbi)) != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      return fail("database " + name + ": " + mdb_strerror(rc));
    }
    p->dbis.emplace(name, dbi);
  }
  if ((rc = mdb_txn_commit(txn)) != MDB_SUCCESS) return fail(mdb_strerror(rc));
  lock.unlock();
  p->refresh_map_size();

  std::unique_ptr<store> s(new store(std::move(p)));
  s->impl_->writer = std::thread([raw = s->impl_.get()] {
    name_this_thread("xconn-store");
    raw->run_writer();
  });
  return s;
}

store::store(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

store::~store() {
  {
    std::lock_guard lock(impl_->queue_mutex);
    impl_->stopping = true;
  }
  impl_->queue_cv.notify_one();
  if (impl_->writer.joinable()) impl_->writer.join();  // the writer drains the queue before it returns
}

void store::write(write_batch batch, completion done) {
  {
    std::lock_guard lock(impl_->queue_mutex);
    if (!impl_->stopping) {
      impl_->queue.push_back({std::move(batch), std::move(done)});
      impl_->queue_cv.notify_one();
      return;
    }
  }
  if (done) done(std::make_error_code(std::errc::operation_canceled));  // the store is closing
}

namespace {

struct gradual_erase {
  std::string database;
  std::vector<std::string> keys;
  std::size_t next = 0;
  std::error_code first_error;
  store::completion done;
};

void erase_step(store& db, std::shared_ptr<gradual_erase> job) {
  if (job->next == job->keys.size()) {
    if (job->done) job->done(job->first_error);
    return;
  }
  write_batch batch;
  auto end = std::min(job->keys.size(), job->next + store::erase_step_keys);
  for (; job->next < end; ++job->next) batch.erase(job->database, std::move(job->keys[job->next]));
  db.write(std::move(batch), [&db, job = std::move(job)](std::error_code ec) mutable {
    if (ec && !job->first_error) job->first_error = ec;
    erase_step(db, std::move(job));
  });
}

}  // namespace

void store::erase_gradually(std::string database, std::vector<std::string> keys, completion done) {
  erase_step(*this, std::make_shared<gradual_erase>(
                        gradual_erase{std::move(database), std::move(keys), 0, {}, std::move(done)}));
}

std::error_code store::write_sync(write_batch batch) {
  std::promise<std::error_code> result;
  auto future = result.get_future();
  write(std::move(batch), [&result](std::error_code ec) { result.set_value(ec); });
  return future.get();
}

void store::flush() { write_sync({}); }

std::optional<std::string> store::get(std::string_view database, std::string_view key) const {
  const MDB_dbi* dbi = impl_->find_dbi(database);
  if (!dbi) return std::nullopt;
  std::shared_lock<std::shared_mutex> lock;
  MDB_txn* txn = nullptr;
  if (impl_->begin(MDB_RDONLY, &txn, lock) != MDB_SUCCESS) return std::nullopt;
  MDB_val k = to_val(key), v{};
  std::optional<std::string> out;
  // An empty or oversized key is refused by LMDB (MDB_BAD_VALSIZE): such a key cannot exist either.
  if (mdb_get(txn, *dbi, &k, &v) == MDB_SUCCESS) out.emplace(to_view(v));
  mdb_txn_abort(txn);
  return out;
}

void store::scan(std::string_view database, std::string_view prefix,
                 const std::function<bool(std::string_view key, std::string_view value)>& visit) const {
  const MDB_dbi* dbi = impl_->find_dbi(database);
  if (!dbi) return;
  // The visitor runs inside the read txn (zero copy), holding the resize guard shared: it must not wait on
  // a write of this store, which may need that guard exclusive to grow the map.
  std::shared_lock<std::shared_mutex> lock;
  MDB_txn* txn = nullptr;
  if (impl_->begin(MDB_RDONLY, &txn, lock) != MDB_SUCCESS) return;
  MDB_cursor* cursor = nullptr;
  if (mdb_cursor_open(txn, *dbi, &cursor) != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    return;
  }
  struct cleanup {  // the visitor may throw
    MDB_txn* txn;
    MDB_cursor* cursor;
    ~cleanup() {
      mdb_cursor_close(cursor);  // read-only cursors are not freed with their txn
      mdb_txn_abort(txn);
    }
  } guard{txn, cursor};
  MDB_val k = to_val(prefix), v{};
  int rc = prefix.empty() ? mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
                          : mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    std::string_view key = to_view(k);
    if (!key.starts_with(prefix) || !visit(key, to_view(v))) break;
  }
}

std::uint64_t store::map_size() const { return impl_->map_bytes; }
std::uint64_t store::commit_count() const { return impl_->commits; }

const histogram& store::commit_seconds() const { return impl_->commit_seconds; }
const histogram& store::commit_writes() const { return impl_->commit_writes; }

std::uint64_t store::map_used() const {
  MDB_envinfo info{};
  MDB_stat page{};
  if (mdb_env_info(impl_->env, &info) != MDB_SUCCESS || mdb_env_stat(impl_->env, &page) != MDB_SUCCESS) return 0;
  return (static_cast<std::uint64_t>(info.me_last_pgno) + 1) * page.ms_psize;
}

bool store::copy_compacted(int fd, completion done) {
  if (impl_->copying.exchange(true)) return false;
  if (impl_->copier.joinable()) impl_->copier.join();  // the last copy has ended: its thread only returns
  impl_->copier = std::thread([p = impl_.get(), fd, done = std::move(done)] {
    name_this_thread("xconn-backup");
    int rc = 0;
    {
      std::shared_lock txn(p->txn_guard);  // no resize under the copy's read transaction
      rc = mdb_env_copyfd2(p->env, fd, MDB_CP_COMPACT);
    }
    if (rc != MDB_SUCCESS) spdlog::error("store: backup copy failed: {}", mdb_strerror(rc));
    if (done) done(rc == MDB_SUCCESS ? std::error_code{} : std::error_code(rc > 0 ? rc : EIO, std::generic_category()));
    ::close(fd);
    p->copying = false;
  });
  return true;
}

}  // namespace xconn
