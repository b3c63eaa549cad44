// plugin_files over a real LMDB file store: the non-blocking write (plugin.h xconn_host_file_write_nowait) takes
// bytes without waiting, says when the store is behind, refuses a write while its ready is pending, runs each ready
// exactly once, and the file holds exactly the bytes taken.
#include "core/files/plugin_files.hpp"

#include "core/base/crypto.hpp"
#include "support/file_store_fixture.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {

TEST_F(FileStore, WriteNowaitNeverWaitsRunsEachReadyOnceAndKeepsExactlyTheBytesTaken) {
  cfg_.max_bytes = 256ull << 20;
  files_ = std::make_unique<file_store>(*db_, cfg_, [this] { return now_.load(); });
  plugin_files access(*files_, [](std::string_view, std::string_view) { return true; });
  auto* upload = access.begin("echo", "cch_a", "big.bin", "application/octet-stream");
  ASSERT_NE(upload, nullptr);
  // The store's writer is held on a commit of its own, so the file's chunks pile up: behind, whatever the timing.
  std::promise<void> stalled, release;
  auto released = release.get_future().share();
  write_batch hold;
  hold.put("meta", "hold", "1");
  db_->write(std::move(hold), [&stalled, released](std::error_code) {
    stalled.set_value();
    released.wait();
  });
  stalled.get_future().wait();
  const std::string piece = random_bytes(2 * file_store::max_chunks_queued * file_store::chunk_bytes, 7);
  auto ran = std::make_shared<std::atomic<int>>(0);
  EXPECT_EQ(access.write_nowait(*upload, piece, [ran] { ++*ran; }), 1) << "taken, and the store is behind";
  EXPECT_EQ(access.write_nowait(*upload, "x", [] {}), -2) << "a write while the ready is pending is not taken";
  EXPECT_EQ(ran->load(), 0);
  release.set_value();
  ASSERT_TRUE(wait_until([&] { return ran->load() == 1; })) << "the ready never ran";
  std::string taken = piece;
  // Room again: small writes are taken at once.
  EXPECT_EQ(access.write_nowait(*upload, "tail", [] {}), 0);
  taken += "tail";
  EXPECT_EQ(ran->load(), 1) << "ran more than once";
  std::promise<finish_result> finished;
  access.end(upload, true, [&](finish_result r) { finished.set_value(std::move(r)); });
  auto f = finished.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto stored = f.get();
  ASSERT_TRUE(stored) << stored.error();
  EXPECT_EQ(stored->byte_size, taken.size());
  EXPECT_EQ(stored->sha256, sha256_hex(taken));
}

TEST_F(FileStore, WriteNowaitPastTheSizeLimitFailsAndEndSaysWhy) {
  cfg_.max_bytes = 2 * file_store::chunk_bytes;
  files_ = std::make_unique<file_store>(*db_, cfg_, [this] { return now_.load(); });
  plugin_files access(*files_, [](std::string_view, std::string_view) { return true; });
  auto* upload = access.begin("echo", "cch_a", "big.bin", "");
  EXPECT_EQ(access.write_nowait(*upload, std::string(3 * file_store::chunk_bytes, 'a'), [] {}), -1);
  std::promise<finish_result> finished;
  access.end(upload, true, [&](finish_result r) { finished.set_value(std::move(r)); });
  auto stored = finished.get_future().get();
  ASSERT_FALSE(stored);
  EXPECT_EQ(stored.error(), "payload_too_large");
}

}  // namespace
}  // namespace xconn::test
