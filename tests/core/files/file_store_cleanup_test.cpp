// What the file store erases (docs/protocol.md "Files"): removal erases a record at once and all its chunks, collect()
// exactly the expired files, a channel drop exactly its files; files survive a restart, load() after a crash drops
// interrupted uploads and orphan chunks, and a fast producer is paced by the backlog.
#include "core/files/file_store.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
#include "support/file_store_fixture.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace xconn::test {
namespace {
using namespace std::chrono_literals;

TEST_F(FileStore, RemoveErasesRecordAtOnceAndAllChunks) {
  const std::string other_data = random_bytes(3 * file_store::chunk_bytes, 12);
  auto f = upload("cch_a", random_bytes(200 * 1024, 13));
  auto other = upload("cch_a", other_data);
  ASSERT_EQ(chunk_keys(*db_, f.file_ref).size(), 4u);

  std::promise<std::pair<bool, bool>> seen;  // (ok, found when done ran)
  auto fut = seen.get_future();
  files_->remove(f.file_ref, [&](file_store::remove_outcome outcome) {
    seen.set_value({outcome == file_store::remove_outcome::removed, files_->find(f.file_ref).has_value()});
  });
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  auto [ok, still_found] = fut.get();
  EXPECT_TRUE(ok);
  EXPECT_FALSE(still_found) << "the record outlived done(true)";
  EXPECT_TRUE(gone_everywhere(f.file_ref));

  auto kept = files_->find(other.file_ref);
  ASSERT_TRUE(kept);
  EXPECT_EQ(chunk_keys(*db_, other.file_ref).size(), 3u);
  std::string joined;
  for (std::uint64_t i = 0; i < 3; ++i) joined += files_->chunk(other.file_ref, i).value_or("");
  EXPECT_TRUE(joined == other_data);

  // Nothing to remove: done(false).
  for (const std::string& ref : {f.file_ref, "file_" + random_hex(16), std::string("file_x"), std::string()}) {
    std::promise<bool> r;
    auto rf = r.get_future();
    files_->remove(ref, [&](file_store::remove_outcome v) { r.set_value(v != file_store::remove_outcome::not_found); });
    ASSERT_EQ(rf.wait_for(10s), std::future_status::ready) << ref;
    EXPECT_FALSE(rf.get()) << "[" << ref << "]";
  }
}

TEST_F(FileStore, RemoveLeavesAnUploadStillRunningToItsWriter) {
  // Its record does not know its chunks yet: erasing it would strand them and finish would write it back.
  const std::string data = random_bytes(2 * file_store::chunk_bytes + 5, 15);
  auto w = files_->begin("echo", "cch_a", "running.bin", "");
  ASSERT_TRUE(w->append(data));
  db_->flush();
  std::promise<bool> r;
  auto rf = r.get_future();
  files_->remove(w->file_ref(), [&](file_store::remove_outcome v) { r.set_value(v != file_store::remove_outcome::not_found); });
  ASSERT_EQ(rf.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(rf.get());
  auto done = finish_sync(*w);
  ASSERT_TRUE(done && done->has_value());
  auto f = files_->find((*done)->file_ref);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->byte_size, data.size());
}

TEST_F(FileStore, RemoveOfAFileLargerThanOneEraseStep) {
  // More chunks than one step of a gradual erase: the erase takes several transactions and still every chunk.
  const std::size_t n = xconn::store::erase_step_keys + 3;
  auto f = upload("cch_a", random_bytes(n * file_store::chunk_bytes - 1, 14));
  ASSERT_EQ(chunk_keys(*db_, f.file_ref).size(), n);
  files_->remove(f.file_ref);
  EXPECT_TRUE(gone_everywhere(f.file_ref));
}

TEST_F(FileStore, CollectRemovesExactlyTheExpiredFiles) {
  auto a = upload("cch_a", random_bytes(100000, 21));
  now_ += 10'000;
  auto b = upload("cch_a", random_bytes(100000, 22));
  ASSERT_EQ(b.expires_at, a.expires_at + 10'000);

  now_ = a.expires_at - 1;
  EXPECT_EQ(files_->collect(), 0u);
  db_->flush();
  EXPECT_TRUE(files_->find(a.file_ref));

  now_ = a.expires_at;
  EXPECT_EQ(files_->collect(), 1u);
  EXPECT_TRUE(gone_everywhere(a.file_ref));
  EXPECT_TRUE(files_->find(b.file_ref));
  EXPECT_EQ(chunk_keys(*db_, b.file_ref).size(), 2u);
  db_->flush();
  EXPECT_EQ(files_->collect(), 0u) << "collected twice";

  now_ = b.expires_at + 5;
  EXPECT_EQ(files_->collect(), 1u);
  EXPECT_TRUE(gone_everywhere(b.file_ref));
  db_->flush();
  EXPECT_TRUE(keys(*db_, file_store::files_db).empty());
  EXPECT_TRUE(keys(*db_, file_store::chunks_db).empty());
}

TEST_F(FileStore, CollectLeavesUploadsInProgress) {
  auto w = files_->begin("echo", "cch_a", "slow.bin", "");
  ASSERT_TRUE(w->append(random_bytes(file_store::chunk_bytes + 1, 23)));
  db_->flush();
  now_ += cfg_.ttl_s * 1000LL + 1;
  EXPECT_EQ(files_->collect(), 0u);
  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_value()) << r->error();
  EXPECT_EQ(chunk_keys(*db_, (**r).file_ref).size(), 2u);
}

TEST_F(FileStore, DropChannelsRemovesOnlyThoseChannels) {
  auto a1 = upload("cch_a", random_bytes(70000, 31));
  auto a2 = upload("cch_a", random_bytes(10, 32));
  auto b = upload("cch_b", random_bytes(140000, 33));
  auto c = upload("cch_c", random_bytes(70000, 34));
  auto ab = upload("cch_ab", random_bytes(70000, 35));  // a name that merely contains another

  files_->drop_channels({"cch_a", "cch_b", "cch_unknown"});
  for (const auto& gone : {a1, a2, b}) EXPECT_TRUE(gone_everywhere(gone.file_ref)) << gone.channel_id;
  db_->flush();
  for (const auto& kept : {c, ab}) {
    EXPECT_TRUE(files_->find(kept.file_ref)) << kept.channel_id;
    EXPECT_EQ(chunk_keys(*db_, kept.file_ref).size(), 2u) << kept.channel_id;
  }
  auto all = keys(*db_, file_store::files_db);
  std::sort(all.begin(), all.end());
  std::vector<std::string> want{c.file_ref, ab.file_ref};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(all, want);

  files_->drop_channels({});
  db_->flush();
  EXPECT_EQ(keys(*db_, file_store::files_db).size(), 2u);
}

TEST_F(FileStore, FilesSurviveARestart) {
  const std::string data = random_bytes(150000, 41);
  auto f = upload("cch_a", data);
  close();
  open(dir_.str());
  EXPECT_EQ(files_->load(), 1u);
  auto found = files_->find(f.file_ref);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->sha256, sha256_hex(data));
  std::string back;
  for (std::uint64_t i = 0; i < ceil_chunks(data.size()); ++i) back += files_->chunk(f.file_ref, i).value_or("");
  EXPECT_TRUE(back == data);
}

// A crash mid-upload: the disk as it was while one upload ran (its incomplete record and some chunks written),
// plus what an erase cut short leaves (chunks without a record) and a record that does not parse.
TEST_F(FileStore, LoadAfterACrashDropsInterruptedUploadsAndOrphanChunks) {
  const std::string kept_data = random_bytes(3 * file_store::chunk_bytes + 77, 51);
  auto kept = upload("cch_a", kept_data);
  auto kept_empty = upload("cch_b", "");
  auto w = files_->begin("echo", "cch_a", "interrupted.bin", "");
  ASSERT_TRUE(w->append(random_bytes(4 * file_store::chunk_bytes + 5, 52)));
  db_->flush();
  std::string interrupted;
  for (auto& k : keys(*db_, file_store::files_db))
    if (k != kept.file_ref && k != kept_empty.file_ref) interrupted = k;
  ASSERT_TRUE(valid_file_ref(interrupted));
  ASSERT_EQ(chunk_keys(*db_, interrupted).size(), 4u);

  // The crash: the data file as it is now (every write so far committed), opened by a new process.
  test::temp_dir crashed;
  std::filesystem::copy_file(dir_.path() / "data.mdb", crashed.path() / "data.mdb");
  auto db2 = open_store(crashed.str());
  ASSERT_TRUE(db2);
  ASSERT_TRUE(db2->get(file_store::files_db, interrupted)) << "the snapshot lacks the interrupted upload";
  ASSERT_EQ(chunk_keys(*db2, interrupted).size(), 4u);

  const std::string orphan = "file_" + random_hex(16);
  const std::string garbled = "file_" + random_hex(16);
  auto first_chunk = chunk_keys(*db2, kept.file_ref).at(0);
  auto orphan_chunk = orphan + first_chunk.substr(kept.file_ref.size());
  auto garbled_chunk = garbled + first_chunk.substr(kept.file_ref.size());
  ASSERT_FALSE(db2->write_sync(write_batch{}
                                   .put(std::string(file_store::chunks_db), orphan_chunk, "orphan bytes")
                                   .put(std::string(file_store::files_db), garbled, "{not json")
                                   .put(std::string(file_store::chunks_db), garbled_chunk, "garbled bytes")));

  file_store files2(*db2, cfg_, [this] { return now_.load(); });
  EXPECT_EQ(files2.load(), 2u);
  db2->flush();

  auto records = keys(*db2, file_store::files_db);
  std::sort(records.begin(), records.end());
  std::vector<std::string> want{kept.file_ref, kept_empty.file_ref};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(records, want);
  EXPECT_EQ(keys(*db2, file_store::chunks_db), chunk_keys(*db2, kept.file_ref)) << "chunks without a complete record";
  EXPECT_EQ(chunk_keys(*db2, kept.file_ref).size(), 4u);
  EXPECT_EQ(files2.find(interrupted), std::nullopt);

  auto found = files2.find(kept.file_ref);
  ASSERT_TRUE(found);
  std::string back;
  for (std::uint64_t i = 0; i < 4; ++i) back += files2.chunk(kept.file_ref, i).value_or("");
  EXPECT_TRUE(back == kept_data);
  EXPECT_EQ(sha256_hex(back), found->sha256);
  EXPECT_TRUE(files2.find(kept_empty.file_ref));

  // A second load finds nothing more to drop.
  EXPECT_EQ(files2.load(), 2u);
  db2.reset();
}

TEST_F(FileStore, WhenDrainedRunsAtOnceWithoutBacklog) {
  auto w = files_->begin("echo", "cch_a", "a.bin", "");
  EXPECT_FALSE(w->backlogged());
  int runs = 0;
  w->when_drained([&] { ++runs; });
  EXPECT_EQ(runs, 1);
}

TEST_F(FileStore, FastProducerIsPacedByTheBacklogAndEachResumeRunsOnce) {
  const std::size_t chunks = 6 * file_store::max_chunks_queued + 64;
  std::string piece = random_bytes(file_store::chunk_bytes, 61);
  sha256_stream digest;
  auto w = files_->begin("echo", "cch_a", "stream.bin", "");
  std::vector<std::shared_ptr<std::atomic<int>>> resumes;
  int backlogs = 0;
  for (std::size_t i = 0; i < chunks; ++i) {
    piece[i % piece.size()] ^= 0x5a;
    ASSERT_TRUE(w->append(piece)) << i;
    digest.update(piece);
    if (w->backlogged()) {
      ++backlogs;
      auto runs = std::make_shared<std::atomic<int>>(0);
      resumes.push_back(runs);
      w->when_drained([runs] { ++*runs; });
      ASSERT_TRUE(test::wait_until([&] { return runs->load() >= 1; })) << "resume never ran (chunk " << i << ")";
      EXPECT_FALSE(w->backlogged()) << "resumed while still backlogged";
    }
  }
  // Whatever is still queued: the resume runs (now or later), once.
  auto last = std::make_shared<std::atomic<int>>(0);
  resumes.push_back(last);
  w->when_drained([last] { ++*last; });
  ASSERT_TRUE(test::wait_until([&] { return last->load() >= 1; })) << "final resume never ran";

  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_value()) << r->error();
  EXPECT_EQ((**r).byte_size, chunks * file_store::chunk_bytes);
  EXPECT_EQ((**r).sha256, digest.final_hex());
  EXPECT_EQ(chunk_keys(*db_, (**r).file_ref).size(), chunks);
  db_->flush();
  for (std::size_t i = 0; i < resumes.size(); ++i) EXPECT_EQ(resumes[i]->load(), 1) << "resume " << i;
  RecordProperty("backlogs", backlogs);
}

}  // namespace
}  // namespace xconn::test
