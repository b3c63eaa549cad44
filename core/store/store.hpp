// The one LMDB environment that holds every durable fact of the host.
//
// Reads run on any thread in their own read transaction. Writes go through one writer thread that gathers
// every pending request into one transaction (group commit) and reports each request's completion only
// after that commit is durable, so no I/O thread ever waits on fsync. A request LMDB would refuse on its own
// (an unknown database, a bad key) fails alone, before the transaction; the rest of the group still commits.
#pragma once

#include "core/base/histogram.hpp"
#include <boost/system/result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace xconn {

struct store_options {
  std::string path;                              // the environment folder; created (0700) if missing
  std::uint64_t map_size_bytes = 1ull << 30;     // the starting map; it doubles on demand when full
  std::vector<std::string> databases;            // named databases to open (created if missing)
  // Disk space held in {path}/reserve and released when the disk fills, so that deletes still commit (0: none).
  // While it is released the store only deletes: a batch that puts fails at once with no_space_on_device, until
  // a try (at most one per 10 s) finds the reserve's size free again.
  std::uint64_t reserve_bytes = 0;
};

// One write: put or erase of a key in a named database.
struct store_op {
  enum class kind { put, erase } what = kind::put;
  std::string database;
  std::string key;
  std::string value;
};

// A group of ops committed together (all or none).
struct write_batch {
  std::vector<store_op> ops;
  write_batch& put(std::string database, std::string key, std::string value);
  write_batch& erase(std::string database, std::string key);  // erasing a missing key is not an error
};

class store {
 public:
  using completion = std::function<void(std::error_code)>;

  // Opens (or creates) the environment; clears stale reader slots left by a killed process.
  static boost::system::result<std::unique_ptr<store>, std::string> open(const store_options& options);
  ~store();  // flushes pending writes, stops the writer, closes the environment
  store(const store&) = delete;
  store& operator=(const store&) = delete;

  // Queues a batch. done runs on the writer thread once the batch is committed (or failed); keep it short
  // and post real work elsewhere. An unknown database fails the batch with std::errc::invalid_argument.
  void write(write_batch batch, completion done = {});

  // Erases many keys of one database in transactions of at most erase_step_keys each, queuing the next only
  // once the one before has committed. A sweep of tens of thousands of keys thus never becomes one transaction:
  // such a transaction copies nearly every page of the database at once, more than the free list holds, so the
  // file grows at each sweep; and it would hold back every other writer meanwhile. done (optional) runs on the
  // writer thread after the last step, with the first error met.
  static constexpr std::size_t erase_step_keys = 512;
  void erase_gradually(std::string database, std::vector<std::string> keys, completion done = {});

  // Queues a batch and waits for its commit. Not for I/O threads.
  std::error_code write_sync(write_batch batch);

  // Waits until every write queued before this call has committed.
  void flush();

  // Point read; nullopt when the key (or database) does not exist. Not found is not an error.
  std::optional<std::string> get(std::string_view database, std::string_view key) const;

  // Visits every key starting with prefix, in key order; the visitor returns false to stop.
  void scan(std::string_view database, std::string_view prefix,
            const std::function<bool(std::string_view key, std::string_view value)>& visit) const;

  // The current map size in bytes (grows when full).
  std::uint64_t map_size() const;
  // Number of committed write transactions so far (group commit makes it smaller than the write count).
  std::uint64_t commit_count() const;
  // Each commit's duration (begin to durable) and its number of write batches.
  const histogram& commit_seconds() const;
  const histogram& commit_writes() const;
  // Bytes of the map in use (the pages up to the last one written).
  std::uint64_t map_used() const;

  // Writes a compacted, consistent copy of the data file (what data.mdb would hold) to fd, from one read
  // transaction, on a thread of its own while writes go on; then runs done there and closes fd. One copy at a time:
  // false (fd untouched) while another runs. A map resize waits for the copy to end.
  bool copy_compacted(int fd, completion done);

 private:
  struct impl;
  explicit store(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace xconn
