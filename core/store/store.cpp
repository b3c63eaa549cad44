#include "core/store/store.hpp"
#include "core/store/data_file_check.hpp"
#include "core/store/store_impl.hpp"
#include "core/base/histogram.hpp"
#include "core/base/thread_name.hpp"

#include <lmdb.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <future>
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

}  // namespace

std::error_code lmdb_error(int rc) {
  if (rc == MDB_SUCCESS) return {};
  if (rc > 0) return {rc, std::generic_category()};
  return {rc, lmdb_category()};
}

write_batch& write_batch::put(std::string database, std::string key, std::string value) {
  ops.push_back({store_op::kind::put, std::move(database), std::move(key), std::move(value)});
  return *this;
}

write_batch& write_batch::erase(std::string database, std::string key) {
  ops.push_back({store_op::kind::erase, std::move(database), std::move(key), {}});
  return *this;
}

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
  MDB_val k = to_mdb_val(key), v{};
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
  MDB_val k = to_mdb_val(prefix), v{};
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
