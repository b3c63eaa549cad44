#include "core/store/store_impl.hpp"

#include <spdlog/spdlog.h>

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>

namespace xconn {

// What LMDB would refuse in a request on its own (an unknown database, an empty or over-long key) fails that
// request alone, before any transaction: inside one, the only failures left are the environment's. (A child
// transaction per request would isolate them too, but costs a 2 MiB dirty list each and makes a large group
// commit quadratic.)
std::error_code store::impl::check(const write_batch& batch) const {
  for (const auto& op : batch.ops) {
    if (!find_dbi(op.database)) return std::make_error_code(std::errc::invalid_argument);
    if (op.key.empty() || op.key.size() > max_key_bytes) return lmdb_error(MDB_BAD_VALSIZE);
  }
  return {};
}

int store::impl::apply(MDB_txn* txn, const write_batch& batch) {
  for (const auto& op : batch.ops) {
    MDB_dbi dbi = *find_dbi(op.database);
    MDB_val key = to_mdb_val(op.key);
    int rc;
    if (op.what == store_op::kind::put) {
      MDB_val value = to_mdb_val(op.value);
      rc = mdb_put(txn, dbi, &key, &value, 0);
    } else {
      rc = mdb_del(txn, dbi, &key, nullptr);
      if (rc == MDB_NOTFOUND) rc = MDB_SUCCESS;
    }
    if (rc != MDB_SUCCESS) return rc;
  }
  return MDB_SUCCESS;
}

void store::impl::finish(store::impl::request& r, std::error_code ec) {
  if (!r.done) return;
  // A throwing completion must not kill the writer thread (that would terminate the process).
  try {
    r.done(ec);
  } catch (...) {
  }
}

// Commits work[first, ...) in one transaction, at most max_requests_per_commit of it and as far as it fits;
// completes those requests and returns how many it completed (at least one).
std::size_t store::impl::commit_some(std::vector<store::impl::request>& work, std::size_t first) {
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
      finish(work[first], lmdb_error(rc));
      return 1;
    }
    if (!delete_only && reserve && disk_full(rc)) {
      go_delete_only();
      return 0;  // nothing completed: the caller sorts the work again
    }
    if (rc != MDB_SUCCESS) {
      // The environment failed (begin, a write, commit, or no room to grow): everything pending fails with it.
      for (std::size_t i = first; i < work.size(); ++i) finish(work[i], lmdb_error(rc));
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
bool store::impl::disk_full(int rc) const {
  if (rc == ENOSPC || rc == EDQUOT) return true;
  struct statvfs fs {};
  return rc == EIO && ::statvfs(path.c_str(), &fs) == 0 &&
         static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize < (1u << 20);
}

void store::impl::go_delete_only() {
  reserve->release();
  delete_only = true;
  last_reserve_try = std::chrono::steady_clock::now();
  spdlog::error("store: the disk is full; released the {} MiB reserve: until that much is free again the store "
                "only deletes (uploads answer 507, other writes fail as retryable)",
                reserve->bytes() >> 20);
}

// Delete-only: fails every request that puts, unless the reserve can be taken again (tried at most once per
// reserve_retry); the erase-only ones stay in work.
void store::impl::refuse_puts(std::vector<store::impl::request>& work) {
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
void store::impl::commit_all(std::vector<store::impl::request>& work) {
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

void store::impl::run_writer() {
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

}  // namespace xconn
