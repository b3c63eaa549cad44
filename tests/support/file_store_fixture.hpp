// The file-store fixture: a real LMDB store in a temp folder with every database the file store names, a
// file_store on an injected clock, and helpers to feed, finish and inspect uploads.
#pragma once

#include "core/files/file_store.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace xconn::test {

using finish_result = boost::system::result<stored_file, std::string>;

inline constexpr long long start_ms = 1'700'000'000'000LL;

// Every database the file store names (an index database too, once it has one).
template <class files = file_store>
inline std::vector<std::string> file_databases() {
  std::vector<std::string> out{"meta", std::string(files::files_db), std::string(files::chunks_db)};
  if constexpr (requires { files::by_channel_db; }) out.emplace_back(files::by_channel_db);
  return out;
}

inline std::unique_ptr<store> open_store(const std::string& path) {
  auto s = store::open({path, 1ull << 28, file_databases()});
  if (!s) ADD_FAILURE() << s.error();
  return s ? std::move(*s) : nullptr;
}

inline std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(byte(gen));
  return out;
}

// Keys of a database (optionally under a prefix), in key order.
inline std::vector<std::string> keys(store& db, std::string_view database, std::string_view prefix = "") {
  std::vector<std::string> out;
  db.scan(database, prefix, [&](std::string_view key, std::string_view) {
    out.emplace_back(key);
    return true;
  });
  return out;
}

inline std::vector<std::string> chunk_keys(store& db, std::string_view file_ref) {
  return keys(db, file_store::chunks_db, std::string(file_ref) + "/");
}

inline std::uint64_t ceil_chunks(std::uint64_t bytes) {
  return (bytes + file_store::chunk_bytes - 1) / file_store::chunk_bytes;
}

// Finishes a writer and waits (with a deadline) for its completion; nullopt when it never came.
inline std::optional<finish_result> finish_sync(file_store::writer& w) {
  auto p = std::make_shared<std::promise<finish_result>>();
  auto result = p->get_future();
  w.finish([p](finish_result r) { p->set_value(std::move(r)); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return std::nullopt;
  return result.get();
}

// Appends data in pieces of the given sizes (cycled).
inline bool feed(file_store::writer& w, std::string_view data, const std::vector<std::size_t>& sizes) {
  std::size_t i = 0;
  while (!data.empty()) {
    auto n = std::min(data.size(), sizes[i++ % sizes.size()]);
    if (!w.append(data.substr(0, n))) return false;
    data.remove_prefix(n);
  }
  return true;
}

inline bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

class FileStore : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_.max_bytes = 64ull << 20;
    cfg_.ttl_s = 3600;
    cfg_.url_ttl_s = 60;
    open(dir_.str());
  }
  void TearDown() override { close(); }

  void open(const std::string& path) {
    db_ = open_store(path);
    ASSERT_TRUE(db_);
    files_ = std::make_unique<file_store>(*db_, cfg_, [this] { return now_.load(); });
  }
  // The store goes first: draining its queue may still run erase chains that call into files_.
  void close() {
    db_.reset();
    files_.reset();
  }

  // One whole upload; fails the test when it is not stored.
  stored_file upload(const std::string& channel, const std::string& data, std::string_view name = "f.bin") {
    auto w = files_->begin("echo", channel, name, "");
    EXPECT_TRUE(feed(*w, data, {4093, 65537, 17}));
    auto r = finish_sync(*w);
    EXPECT_TRUE(r) << "finish never completed";
    if (!r) return {};
    EXPECT_TRUE(r->has_value()) << r->error();
    return r->has_value() ? (**r) : stored_file{};
  }

  // Both databases hold nothing of file_ref (waits for the erase chains of the store's writer thread).
  bool gone_everywhere(const std::string& file_ref) {
    return wait_until([&] {
      return !db_->get(file_store::files_db, file_ref) && chunk_keys(*db_, file_ref).empty();
    });
  }

  temp_dir dir_;
  files_config cfg_;
  std::atomic<long long> now_{start_ms};
  std::unique_ptr<store> db_;
  std::unique_ptr<file_store> files_;
};

}  // namespace xconn::test
