// The inside of the store (store.hpp), shared by its two halves: store.cpp opens the environment, reads and copies;
// store_writer.cpp is the writer thread's group commit and its handling of a full disk. Private to core/store.
#pragma once

#include "core/store/disk_reserve.hpp"
#include "core/store/store.hpp"

#include <lmdb.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace xconn {

// LMDB returns either its own negative MDB_* codes or a plain errno (ENOSPC, EIO, ENOMEM...); the latter keep the
// generic category so callers can compare them with std::errc.
std::error_code lmdb_error(int rc);
inline MDB_val to_mdb_val(std::string_view s) { return {s.size(), const_cast<char*>(s.data())}; }
inline std::string_view to_view(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

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

  // ---- the writer thread's (store_writer.cpp) ----

  // What LMDB would refuse in a request on its own (an unknown database, an empty or over-long key) fails that
  // request alone, before any transaction: inside one, the only failures left are the environment's. (A child
  // transaction per request would isolate them too, but costs a 2 MiB dirty list each and makes a large group
  // commit quadratic.)
  std::error_code check(const write_batch& batch) const;
  int apply(MDB_txn* txn, const write_batch& batch);
  static void finish(request& r, std::error_code ec);
  // Commits work[first, ...) in one transaction, at most max_requests_per_commit of it and as far as it fits;
  // completes those requests and returns how many it completed (at least one).
  std::size_t commit_some(std::vector<request>& work, std::size_t first);
  // LMDB reports a write cut short by a full disk as EIO: then the file system's free space decides.
  bool disk_full(int rc) const;
  void go_delete_only();
  // Delete-only: fails every request that puts, unless the reserve can be taken again (tried at most once per
  // reserve_retry); the erase-only ones stay in work.
  void refuse_puts(std::vector<request>& work);
  // Commits work; when the disk fills on the way, fails what puts and commits what only deletes.
  void commit_all(std::vector<request>& work);
  void run_writer();
};

}  // namespace xconn
