// The transfer plane's file store (docs/protocol.md "Files") over a real LMDB store: bytes come back identical across
// chunk boundaries, names are cleaned on begin, malformed / incomplete / expired files are never served, and oversize,
// aborted and abandoned uploads leave nothing behind. Removal, expiry, channel drops, crashes and pacing are in
// file_store_cleanup_test.cpp, the name rules in file_store_names_test.cpp.
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

TEST_F(FileStore, BytesComeBackIdenticalAcrossChunkBoundaries) {
  const std::string data = random_bytes((1u << 20) + 123, 7);
  auto w = files_->begin("echo", "cch_a", "photo.PNG", "");
  ASSERT_TRUE(feed(*w, data, {1, 3, 4093, 65535, 2, 65537, 131071, 17, 99991}));
  EXPECT_EQ(w->size(), data.size());
  auto r = finish_sync(*w);
  ASSERT_TRUE(r) << "finish never completed";
  ASSERT_TRUE(r->has_value()) << r->error();
  const stored_file f = (**r);

  EXPECT_TRUE(valid_file_ref(f.file_ref)) << f.file_ref;
  EXPECT_EQ(f.plugin_id, "echo");
  EXPECT_EQ(f.channel_id, "cch_a");
  EXPECT_EQ(f.filename, "photo.PNG");
  EXPECT_EQ(f.mime_type, "image/png");
  EXPECT_EQ(f.type(), "image");
  EXPECT_EQ(f.byte_size, data.size());
  EXPECT_EQ(f.sha256, sha256_hex(data));
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(f.created_at, start_ms);
  EXPECT_EQ(f.expires_at, start_ms + cfg_.ttl_s * 1000LL);

  auto found = files_->find(f.file_ref);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->to_record(), f.to_record());

  // Chunks: ceil(size / chunk_bytes) of them, all full but the last, together the bytes.
  const auto count = ceil_chunks(data.size());
  ASSERT_EQ(count, 17u);
  EXPECT_EQ(chunk_keys(*db_, f.file_ref).size(), count);
  std::string joined;
  for (std::uint64_t i = 0; i < count; ++i) {
    auto c = files_->chunk(f.file_ref, i);
    ASSERT_TRUE(c) << "chunk " << i;
    if (i + 1 < count) {
      EXPECT_EQ(c->size(), file_store::chunk_bytes) << "chunk " << i;
    }
    joined += *c;
  }
  EXPECT_EQ(files_->chunk(f.file_ref, count), std::nullopt);
  EXPECT_EQ(joined.size(), data.size());
  EXPECT_TRUE(joined == data) << "chunks differ from the bytes written";

  // read() with an odd capacity walks the whole file.
  std::string read_back;
  std::vector<char> buf(10007);
  for (std::uint64_t offset = 0;;) {
    auto n = files_->read(*found, offset, buf.data(), buf.size());
    ASSERT_TRUE(n) << "offset " << offset;
    if (*n == 0) break;
    ASSERT_LE(*n, buf.size());
    read_back.append(buf.data(), *n);
    offset += *n;
    ASSERT_LE(offset, data.size());
  }
  EXPECT_EQ(read_back.size(), data.size());
  EXPECT_TRUE(read_back == data) << "read() differs from the bytes written";

  // Reads that start just before a boundary, inside the last chunk, and at / past the end.
  for (std::uint64_t offset : {file_store::chunk_bytes - 5, file_store::chunk_bytes, 3 * file_store::chunk_bytes + 1,
                               std::uint64_t(data.size() - 1)}) {
    auto n = files_->read(*found, offset, buf.data(), 100);
    ASSERT_TRUE(n) << offset;
    ASSERT_GT(*n, 0u) << offset;
    EXPECT_EQ(std::string(buf.data(), *n), data.substr(offset, *n)) << offset;
  }
  EXPECT_EQ(files_->read(*found, data.size(), buf.data(), buf.size()), std::optional<std::size_t>(0));
  EXPECT_EQ(files_->read(*found, data.size() + 99, buf.data(), buf.size()), std::optional<std::size_t>(0));
}

TEST_F(FileStore, ExactMultipleOfChunkSizeHasNoEmptyTail) {
  const std::string data = random_bytes(2 * file_store::chunk_bytes, 11);
  auto f = upload("cch_a", data);
  EXPECT_EQ(f.byte_size, data.size());
  EXPECT_EQ(f.sha256, sha256_hex(data));
  EXPECT_EQ(chunk_keys(*db_, f.file_ref).size(), 2u);
  EXPECT_EQ(files_->chunk(f.file_ref, 1), data.substr(file_store::chunk_bytes));
  EXPECT_EQ(files_->chunk(f.file_ref, 2), std::nullopt);
}

TEST_F(FileStore, EmptyFile) {
  auto w = files_->begin("echo", "cch_a", "empty.txt", "");
  EXPECT_TRUE(w->append(""));
  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_value()) << r->error();
  const auto& f = (**r);
  EXPECT_EQ(f.byte_size, 0u);
  EXPECT_EQ(f.sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(f.mime_type, "text/plain");
  EXPECT_TRUE(chunk_keys(*db_, f.file_ref).empty());
  EXPECT_EQ(files_->chunk(f.file_ref, 0), std::nullopt);
  auto found = files_->find(f.file_ref);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->byte_size, 0u);
  char c;
  EXPECT_EQ(files_->read(*found, 0, &c, 1), std::optional<std::size_t>(0));
}

TEST_F(FileStore, FinishTwiceAndAppendAfterFinishAreRefused) {
  auto w = files_->begin("echo", "cch_a", "a.txt", "");
  ASSERT_TRUE(w->append("hello"));
  auto first = finish_sync(*w);
  ASSERT_TRUE(first);
  ASSERT_TRUE(first->has_value()) << first->error();
  EXPECT_FALSE(w->append("more"));
  auto second = finish_sync(*w);
  ASSERT_TRUE(second);
  ASSERT_FALSE(second->has_value());
  EXPECT_EQ(second->error(), "already_finished");
  auto found = files_->find((**first).file_ref);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->byte_size, 5u);
}

TEST_F(FileStore, BeginCleansNameAndGuessesOrKeepsMimeType) {
  auto w = files_->begin("echo", "cch_a", "../../secret/Report.PDF", "");
  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_value()) << r->error();
  EXPECT_EQ((**r).filename, "Report.PDF");
  EXPECT_EQ((**r).mime_type, "application/pdf");
  EXPECT_EQ((**r).type(), "file");
  auto item = (**r).item();
  EXPECT_EQ(item.at("type").as_string(), "file");
  EXPECT_EQ(item.at("file_ref").as_string(), (**r).file_ref);
  EXPECT_EQ(item.at("filename").as_string(), "Report.PDF");
  EXPECT_EQ(item.at("mime_type").as_string(), "application/pdf");
  EXPECT_EQ(item.at("byte_size").to_number<std::uint64_t>(), 0u);
  EXPECT_EQ(item.at("expires_at").to_number<long long>(), start_ms + cfg_.ttl_s * 1000LL);
  EXPECT_FALSE(item.contains("download_url"));

  auto v = files_->begin("echo", "cch_a", "clip.bin", "video/mp4");
  auto rv = finish_sync(*v);
  ASSERT_TRUE(rv);
  ASSERT_TRUE(rv->has_value()) << rv->error();
  EXPECT_EQ((**rv).mime_type, "video/mp4") << "an explicit type is kept";
  EXPECT_EQ((**rv).type(), "video");
}

TEST_F(FileStore, FindRefusesMalformedRefs) {
  auto f = upload("cch_a", "hello");
  ASSERT_TRUE(files_->find(f.file_ref));
  std::string upper = f.file_ref;
  std::transform(upper.begin() + 5, upper.end(), upper.begin() + 5, [](unsigned char c) { return std::toupper(c); });
  for (const std::string& bad : {std::string(), std::string("file_"), f.file_ref + "0", f.file_ref.substr(0, 36),
                                 f.file_ref + "/", "File_" + f.file_ref.substr(5), upper, f.file_ref.substr(5)})
    EXPECT_EQ(files_->find(bad), std::nullopt) << "[" << bad << "]";
  // A well-formed ref that names nothing.
  EXPECT_EQ(files_->find("file_" + random_hex(16)), std::nullopt);
  // A record under a malformed key is never looked up.
  ASSERT_FALSE(db_->write_sync(write_batch{}.put(std::string(file_store::files_db), "file_x",
                                                 db_->get(file_store::files_db, f.file_ref).value())));
  EXPECT_EQ(files_->find("file_x"), std::nullopt);
}

TEST_F(FileStore, FindRefusesIncompleteAndExpiredFiles) {
  auto w = files_->begin("echo", "cch_a", "a.bin", "");
  ASSERT_TRUE(w->append(random_bytes(100000, 3)));
  db_->flush();
  // The record exists (marked incomplete) while the upload runs, but is not served.
  std::string ref;
  for (auto& k : keys(*db_, file_store::files_db)) ref = k;
  ASSERT_TRUE(valid_file_ref(ref));
  ASSERT_TRUE(db_->get(file_store::files_db, ref));
  EXPECT_FALSE(chunk_keys(*db_, ref).empty());
  EXPECT_EQ(files_->find(ref), std::nullopt) << "an incomplete upload is served";

  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_value()) << r->error();
  EXPECT_EQ((**r).file_ref, ref);
  ASSERT_TRUE(files_->find(ref));

  const long long expires = (**r).expires_at;
  ASSERT_EQ(expires, start_ms + 3600 * 1000LL);
  now_ = expires - 1;
  EXPECT_TRUE(files_->find(ref)) << "one ms before expiry";
  now_ = expires;
  EXPECT_EQ(files_->find(ref), std::nullopt) << "at expiry";
  now_ = expires + 86400000LL;
  EXPECT_EQ(files_->find(ref), std::nullopt) << "long past expiry";
}

TEST_F(FileStore, AppendPastMaxBytesIsTooLargeAndLeavesNothing) {
  cfg_.max_bytes = 3 * file_store::chunk_bytes + 10;
  auto w = files_->begin("echo", "cch_a", "big.bin", "");
  const std::string data = random_bytes(cfg_.max_bytes, 5);
  ASSERT_TRUE(w->append(data.substr(0, 2 * file_store::chunk_bytes + 7)));
  EXPECT_FALSE(w->too_large());
  EXPECT_FALSE(w->append(data.substr(0, file_store::chunk_bytes + 4))) << "4 bytes over max_bytes";
  EXPECT_TRUE(w->too_large());
  EXPECT_FALSE(w->append("x")) << "stays refused";
  db_->flush();
  std::string ref;
  for (auto& k : keys(*db_, file_store::files_db)) ref = k;
  ASSERT_TRUE(valid_file_ref(ref));
  EXPECT_EQ(chunk_keys(*db_, ref).size(), 2u) << "the chunks before the limit were stored";

  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_FALSE(r->has_value());
  EXPECT_EQ(r->error(), "payload_too_large");
  EXPECT_TRUE(gone_everywhere(ref));
  db_->flush();
  EXPECT_TRUE(keys(*db_, file_store::files_db).empty());
  EXPECT_TRUE(keys(*db_, file_store::chunks_db).empty());
  EXPECT_EQ(files_->find(ref), std::nullopt);
}

TEST_F(FileStore, ExactlyMaxBytesIsAccepted) {
  cfg_.max_bytes = file_store::chunk_bytes + 1;
  const std::string data = random_bytes(cfg_.max_bytes, 6);
  auto w = files_->begin("echo", "cch_a", "edge.bin", "");
  ASSERT_TRUE(w->append(data.substr(0, 100)));
  ASSERT_TRUE(w->append(data.substr(100)));
  EXPECT_FALSE(w->too_large());
  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_value()) << r->error();
  EXPECT_EQ((**r).byte_size, data.size());
  EXPECT_EQ((**r).sha256, sha256_hex(data));
}

TEST_F(FileStore, AbortLeavesNothing) {
  auto keep = upload("cch_a", random_bytes(70000, 1));
  auto w = files_->begin("echo", "cch_a", "a.bin", "");
  ASSERT_TRUE(feed(*w, random_bytes(5 * file_store::chunk_bytes + 99, 2), {30011}));
  db_->flush();
  std::string ref;
  for (auto& k : keys(*db_, file_store::files_db))
    if (k != keep.file_ref) ref = k;
  ASSERT_TRUE(valid_file_ref(ref));
  ASSERT_EQ(chunk_keys(*db_, ref).size(), 5u);

  w->abort();
  EXPECT_FALSE(w->append("x"));
  EXPECT_TRUE(gone_everywhere(ref));
  db_->flush();
  EXPECT_EQ(keys(*db_, file_store::files_db), std::vector<std::string>{keep.file_ref});
  EXPECT_EQ(keys(*db_, file_store::chunks_db), chunk_keys(*db_, keep.file_ref));
  EXPECT_EQ(chunk_keys(*db_, keep.file_ref).size(), 2u);

  auto r = finish_sync(*w);
  ASSERT_TRUE(r);
  ASSERT_FALSE(r->has_value());
  EXPECT_EQ(r->error(), "already_finished");
  db_->flush();
  EXPECT_FALSE(db_->get(file_store::files_db, ref)) << "finish after abort brought the record back";
}

TEST_F(FileStore, WriterDestroyedUnfinishedLeavesNothing) {
  std::string ref;
  {
    auto w = files_->begin("echo", "cch_a", "a.bin", "");
    ASSERT_TRUE(w->append(random_bytes(2 * file_store::chunk_bytes, 8)));
    db_->flush();
    for (auto& k : keys(*db_, file_store::files_db)) ref = k;
    ASSERT_TRUE(valid_file_ref(ref));
    ASSERT_EQ(chunk_keys(*db_, ref).size(), 2u);
    // More chunks, likely still queued when the last reference goes.
    ASSERT_TRUE(feed(*w, random_bytes(20 * file_store::chunk_bytes + 5, 9), {65536}));
  }
  EXPECT_TRUE(gone_everywhere(ref));
  db_->flush();
  EXPECT_TRUE(keys(*db_, file_store::files_db).empty());
  EXPECT_TRUE(keys(*db_, file_store::chunks_db).empty());
}

}  // namespace
}  // namespace xconn::test
