// The transfer plane's file store (protocol.md §5) over a real LMDB store: bytes come back identical across chunk
// boundaries, names are cleaned, malformed / incomplete / expired files are never served, oversize, aborted and
// abandoned uploads leave nothing behind, removal, expiry and channel drops erase exactly what they should, a
// crash mid-upload is cleaned up by load(), and a fast producer is paced by the backlog.
#include "core/files/file_store.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"
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

namespace xconn {
namespace {

using namespace std::chrono_literals;
using finish_result = boost::system::result<stored_file, std::string>;

constexpr long long start_ms = 1'700'000'000'000LL;

// Every database the file store names (an index database too, once it has one).
template <class files = file_store>
std::vector<std::string> file_databases() {
  std::vector<std::string> out{"meta", std::string(files::files_db), std::string(files::chunks_db)};
  if constexpr (requires { files::by_channel_db; }) out.emplace_back(files::by_channel_db);
  return out;
}

std::unique_ptr<store> open_store(const std::string& path) {
  auto s = store::open({path, 1ull << 28, file_databases()});
  if (!s) ADD_FAILURE() << s.error();
  return s ? std::move(*s) : nullptr;
}

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(byte(gen));
  return out;
}

// Keys of a database (optionally under a prefix), in key order.
std::vector<std::string> keys(store& db, std::string_view database, std::string_view prefix = "") {
  std::vector<std::string> out;
  db.scan(database, prefix, [&](std::string_view key, std::string_view) {
    out.emplace_back(key);
    return true;
  });
  return out;
}

std::vector<std::string> chunk_keys(store& db, std::string_view file_ref) {
  return keys(db, file_store::chunks_db, std::string(file_ref) + "/");
}

std::uint64_t ceil_chunks(std::uint64_t bytes) {
  return (bytes + file_store::chunk_bytes - 1) / file_store::chunk_bytes;
}

// Finishes a writer and waits (with a deadline) for its completion; nullopt when it never came.
std::optional<finish_result> finish_sync(file_store::writer& w) {
  auto p = std::make_shared<std::promise<finish_result>>();
  auto result = p->get_future();
  w.finish([p](finish_result r) { p->set_value(std::move(r)); });
  if (result.wait_for(10s) != std::future_status::ready) return std::nullopt;
  return result.get();
}

// Appends data in pieces of the given sizes (cycled).
bool feed(file_store::writer& w, std::string_view data, const std::vector<std::size_t>& sizes) {
  std::size_t i = 0;
  while (!data.empty()) {
    auto n = std::min(data.size(), sizes[i++ % sizes.size()]);
    if (!w.append(data.substr(0, n))) return false;
    data.remove_prefix(n);
  }
  return true;
}

bool valid_utf8(std::string_view s) {
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
    return test::wait_until([&] {
      return !db_->get(file_store::files_db, file_ref) && chunk_keys(*db_, file_ref).empty();
    });
  }

  test::temp_dir dir_;
  files_config cfg_;
  std::atomic<long long> now_{start_ms};
  std::unique_ptr<store> db_;
  std::unique_ptr<file_store> files_;
};

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

TEST(FileStoreNames, CleanFilename) {
  EXPECT_EQ(clean_filename("report.pdf"), "report.pdf");
  EXPECT_EQ(clean_filename("a b (1).txt"), "a b (1).txt");
  EXPECT_EQ(clean_filename("a/b/c.txt"), "c.txt");
  EXPECT_EQ(clean_filename("/etc/passwd"), "passwd");
  EXPECT_EQ(clean_filename("../../etc/passwd"), "passwd");
  EXPECT_EQ(clean_filename("C:\\Users\\me\\report.pdf"), "report.pdf");
  EXPECT_EQ(clean_filename("mixed/dir\\name.txt"), "name.txt");
  EXPECT_EQ(clean_filename("na\x01me\n.t\txt\x7f"), "name.txt");
  EXPECT_EQ(clean_filename(std::string("nul\0byte.txt", 12)), "nulbyte.txt");
  EXPECT_EQ(clean_filename("résumé.pdf"), "résumé.pdf");
  // Nothing usable left: "file".
  for (std::string_view name : {"", ".", "..", "a/..", "..\\..", "dir/", "\\", "\t\r\n", ".\x01.", "x/\x1f"})
    EXPECT_EQ(clean_filename(name), "file") << "[" << name << "]";
  EXPECT_EQ(clean_filename("..."), "...") << "only . and .. name a directory";
}

TEST(FileStoreNames, CleanFilenameCapsAt255BytesWithoutSplittingUtf8) {
  EXPECT_EQ(clean_filename(std::string(300, 'x')), std::string(255, 'x'));
  EXPECT_EQ(clean_filename(std::string(255, 'x')), std::string(255, 'x'));
  EXPECT_EQ(clean_filename("dir/" + std::string(255, 'y')), std::string(255, 'y')) << "the cap applies to the name";
  // A 2-byte character cut after its lead byte.
  EXPECT_EQ(clean_filename(std::string(254, 'a') + "é" + "zzz"), std::string(254, 'a'));
  // A 4-byte character cut after two of its bytes, and after three.
  EXPECT_EQ(clean_filename(std::string(253, 'a') + "😀" + "z"), std::string(253, 'a'));
  EXPECT_EQ(clean_filename(std::string(252, 'a') + "😀" + "z"), std::string(252, 'a'));
  // A 3-byte character cut after its lead byte.
  EXPECT_EQ(clean_filename(std::string(254, 'a') + "€"), std::string(254, 'a'));

  // Any mix of 1..4-byte characters: at most 255 bytes, valid UTF-8, a prefix of the name.
  const std::vector<std::string> alphabet = {"a", "Z", "é", "ß", "€", "中", "😀", "𝄞"};
  std::mt19937 gen(42);
  for (int round = 0; round < 200; ++round) {
    std::string name;
    while (name.size() < 300) name += alphabet[gen() % alphabet.size()];
    auto out = clean_filename(name);
    EXPECT_LE(out.size(), 255u) << name;
    EXPECT_TRUE(valid_utf8(out)) << name;
    EXPECT_EQ(name.compare(0, out.size(), out), 0) << "not a prefix: " << name;
    EXPECT_FALSE(out.empty());
  }
}

// Only a character cut by the cap must go: one that ends exactly at byte 255 fits and should stay.
TEST(FileStoreNames, CleanFilenameKeepsACharacterEndingExactlyAtTheCap) {
  EXPECT_EQ(clean_filename(std::string(253, 'a') + "é" + "b"), std::string(253, 'a') + "é");
  EXPECT_EQ(clean_filename(std::string(251, 'a') + "😀" + "b"), std::string(251, 'a') + "😀");
  EXPECT_EQ(clean_filename(std::string(252, 'a') + "€" + "€"), std::string(252, 'a') + "€");
}

TEST(FileStoreNames, MimeTypeFor) {
  EXPECT_EQ(mime_type_for("a.png"), "image/png");
  EXPECT_EQ(mime_type_for("A.JPG"), "image/jpeg");
  EXPECT_EQ(mime_type_for("b.jpeg"), "image/jpeg");
  EXPECT_EQ(mime_type_for("c.gif"), "image/gif");
  EXPECT_EQ(mime_type_for("clip.mp4"), "video/mp4");
  EXPECT_EQ(mime_type_for("clip.MOV"), "video/quicktime");
  EXPECT_EQ(mime_type_for("song.mp3"), "audio/mpeg");
  EXPECT_EQ(mime_type_for("doc.pdf"), "application/pdf");
  EXPECT_EQ(mime_type_for("notes.txt"), "text/plain");
  EXPECT_EQ(mime_type_for("data.json"), "application/json");
  EXPECT_EQ(mime_type_for("backup.tar.gz"), "application/gzip") << "the last extension counts";
  EXPECT_EQ(mime_type_for("png.exe"), "application/octet-stream");
  EXPECT_EQ(mime_type_for("noext"), "application/octet-stream");
  EXPECT_EQ(mime_type_for("png"), "application/octet-stream");
  EXPECT_EQ(mime_type_for("trailing."), "application/octet-stream");
  EXPECT_EQ(mime_type_for(""), "application/octet-stream");
  EXPECT_EQ(mime_type_for("x.pngx"), "application/octet-stream");
}

TEST(FileStoreNames, ValidFileRef) {
  const std::string hex32 = "0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(valid_file_ref("file_" + hex32));
  EXPECT_TRUE(valid_file_ref("file_" + random_hex(16)));
  EXPECT_FALSE(valid_file_ref(""));
  EXPECT_FALSE(valid_file_ref("file_"));
  EXPECT_FALSE(valid_file_ref("file_" + hex32.substr(1))) << "31 hex";
  EXPECT_FALSE(valid_file_ref("file_" + hex32 + "0")) << "33 hex";
  EXPECT_FALSE(valid_file_ref("file_0123456789ABCDEF0123456789abcdef")) << "uppercase";
  EXPECT_FALSE(valid_file_ref("file_0123456789abcdeg0123456789abcdef")) << "not hex";
  EXPECT_FALSE(valid_file_ref("File_" + hex32));
  EXPECT_FALSE(valid_file_ref("fileX" + hex32));
  EXPECT_FALSE(valid_file_ref("blob_" + hex32));
  EXPECT_FALSE(valid_file_ref("file_" + hex32.substr(0, 31) + "/"));
  EXPECT_FALSE(valid_file_ref(std::string("file_") + hex32.substr(0, 31) + std::string(1, '\0')));
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

TEST_F(FileStore, RemoveErasesRecordAtOnceAndAllChunks) {
  const std::string other_data = random_bytes(3 * file_store::chunk_bytes, 12);
  auto f = upload("cch_a", random_bytes(200 * 1024, 13));
  auto other = upload("cch_a", other_data);
  ASSERT_EQ(chunk_keys(*db_, f.file_ref).size(), 4u);

  std::promise<std::pair<bool, bool>> seen;  // (ok, found when done ran)
  auto fut = seen.get_future();
  files_->remove(f.file_ref, [&](bool ok) { seen.set_value({ok, files_->find(f.file_ref).has_value()}); });
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
    files_->remove(ref, [&](bool v) { r.set_value(v); });
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
  files_->remove(w->file_ref(), [&](bool ok) { r.set_value(ok); });
  ASSERT_EQ(rf.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(rf.get());
  auto done = finish_sync(*w);
  ASSERT_TRUE(done && done->has_value());
  auto f = files_->find((*done)->file_ref);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->byte_size, data.size());
}

TEST_F(FileStore, RemoveOfAFileLargerThanOneEraseBatch) {
  // More chunks than erase_batch_chunks: the erase goes in several batches and still takes every chunk.
  const std::size_t n = file_store::erase_batch_chunks + 3;
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
}  // namespace xconn
