// The start-up check of data.mdb (core/store/data_file_check.hpp): real LMDB files made by the store and by LMDB
// itself, cut in the places that matter, and hostile files built page by page.
#include "core/store/data_file_check.hpp"
#include "core/store/store.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <lmdb.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace data_file_check_test {

using xconn::check_data_pages;
using xconn::data_file_reader;
using xconn::store;
using xconn::write_batch;
using xconn::test::temp_dir;
using bytes = std::vector<unsigned char>;

bytes load_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), {});
}

data_file_reader reader_of(const bytes& file) {
  return [&file](std::uint64_t offset, std::span<unsigned char> out) -> std::size_t {
    if (offset >= file.size()) return 0;
    auto n = std::min<std::uint64_t>(out.size(), file.size() - offset);
    std::memcpy(out.data(), file.data() + offset, n);
    return n;
  };
}

auto check(const bytes& file) { return check_data_pages(file.size(), reader_of(file)); }

auto open_store(const std::string& path) { return store::open({path, 1ull << 30, {"a", "b"}}); }

std::uint64_t meta_needed(const std::filesystem::path& data) {
  auto facts = check(load_file(data));
  EXPECT_TRUE(facts) << facts.error();
  return facts ? facts->needed_bytes : 0;
}

// What an upload past files.max_bytes does: in one write transaction (one batch, as group commit makes it) chunks
// are put and then erased, beside a record that stays. When that transaction has read the free-page list (a store
// that has deleted before), LMDB gives the chunks' pages back to that list unwritten, so data.mdb ends before the
// last page its meta page counts.
void write_and_erase_in_one_transaction(store& s) {
  write_batch earlier, erased;
  for (int i = 0; i < 16; ++i) earlier.put("b", "old-" + std::to_string(i), std::string(64 * 1024, 'o'));
  for (int i = 0; i < 16; ++i) erased.erase("b", "old-" + std::to_string(i));
  ASSERT_FALSE(s.write_sync(std::move(earlier)));
  ASSERT_FALSE(s.write_sync(std::move(erased)));
  write_batch batch;
  batch.put("a", "kept", "the record that stays");
  for (int i = 0; i < 64; ++i) batch.put("b", "chunk-" + std::to_string(i), std::string(64 * 1024, 'c'));
  for (int i = 0; i < 64; ++i) batch.erase("b", "chunk-" + std::to_string(i));
  ASSERT_FALSE(s.write_sync(std::move(batch)));
}

// The tail past the last page a B-tree reaches holds only free pages; LMDB may or may not have written them.
// Cutting there gives the sparse tail whatever LMDB wrote.
void cut_after_the_last_reachable_page(const std::filesystem::path& data) {
  auto facts = check(load_file(data));
  ASSERT_TRUE(facts) << facts.error();
  std::filesystem::resize_file(data, (facts->last_reachable_page + 1) * facts->page_bytes);
}

TEST(data_file_check, a_write_erased_in_its_own_transaction_leaves_a_sparse_tail_that_opens_with_its_data) {
  temp_dir dir;
  auto data = dir.path() / "data.mdb";
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s) << s.error();
    write_and_erase_in_one_transaction(**s);
  }
  // LMDB itself left the file short of what its meta page counts: the old size check refused this store.
  auto needed = meta_needed(data);
  ASSERT_LT(std::filesystem::file_size(data), needed);
  auto s = open_store(dir.str());
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ((*s)->get("a", "kept"), "the record that stays");
  EXPECT_FALSE((*s)->get("b", "chunk-0"));
  // Filled in with zeros at once: nothing can be mapped past the end any more.
  EXPECT_EQ(std::filesystem::file_size(data), needed);
  // And the store goes on: more writes, a reopen.
  EXPECT_FALSE((*s)->write_sync(write_batch{}.put("b", "after", std::string(100'000, 'x'))));
  s->reset();
  auto again = open_store(dir.str());
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ((*again)->get("b", "after"), std::string(100'000, 'x'));
}

TEST(data_file_check, a_file_cut_right_after_its_last_reachable_page_opens_with_every_record) {
  temp_dir dir;
  auto data = dir.path() / "data.mdb";
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s) << s.error();
    write_batch batch;
    for (int i = 0; i < 500; ++i) batch.put("a", "key-" + std::to_string(i), std::string(700, 'v'));
    batch.put("b", "big", std::string(300'000, 'B'));  // overflow pages
    ASSERT_FALSE((*s)->write_sync(std::move(batch)));
    write_and_erase_in_one_transaction(**s);
  }
  cut_after_the_last_reachable_page(data);
  ASSERT_LT(std::filesystem::file_size(data), meta_needed(data));
  auto s = open_store(dir.str());
  ASSERT_TRUE(s) << s.error();
  for (int i = 0; i < 500; ++i) EXPECT_EQ((*s)->get("a", "key-" + std::to_string(i)), std::string(700, 'v'));
  EXPECT_EQ((*s)->get("b", "big"), std::string(300'000, 'B'));
}

TEST(data_file_check, a_file_cut_inside_a_reachable_page_is_refused) {
  temp_dir dir;
  auto data = dir.path() / "data.mdb";
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s) << s.error();
    write_batch batch;
    for (int i = 0; i < 2000; ++i) batch.put("a", "key-" + std::to_string(i), std::string(500, 'v'));
    ASSERT_FALSE((*s)->write_sync(std::move(batch)));
    write_and_erase_in_one_transaction(**s);
  }
  cut_after_the_last_reachable_page(data);
  auto size = std::filesystem::file_size(data);
  for (auto cut : {size - 1, size - 4096, size / 2}) {
    SCOPED_TRACE(cut);
    std::filesystem::resize_file(data, cut);
    auto s = open_store(dir.str());
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().find("cut short (restore it from a backup)"), std::string::npos) << s.error();
    EXPECT_NE(s.error().find(dir.str()), std::string::npos) << s.error();
    EXPECT_EQ(std::filesystem::file_size(data), cut);  // a refused file is left as it was
  }
}

TEST(data_file_check, an_empty_data_file_is_refused_not_taken_for_a_new_store) {
  temp_dir dir;
  std::ofstream(dir.path() / "data.mdb").close();
  auto s = open_store(dir.str());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("data.mdb is empty (0 bytes)"), std::string::npos) << s.error();
  EXPECT_EQ(std::filesystem::file_size(dir.path() / "data.mdb"), 0u);
}

TEST(data_file_check, a_missing_data_file_in_a_new_folder_is_a_new_store) {
  temp_dir dir;
  auto s = open_store((dir.path() / "new").string());
  ASSERT_TRUE(s) << s.error();
  EXPECT_FALSE((*s)->write_sync(write_batch{}.put("a", "k", "v")));
}

TEST(data_file_check, a_data_file_shorter_than_two_pages_is_refused) {
  temp_dir dir;
  auto data = dir.path() / "data.mdb";
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s) << s.error();
  }
  auto page = check(load_file(data))->page_bytes;
  for (std::uint64_t cut : {std::uint64_t{2 * page - 1}, std::uint64_t{page} + 200, std::uint64_t{page}, std::uint64_t{100}}) {
    SCOPED_TRACE(cut);
    std::filesystem::resize_file(data, cut);
    auto s = open_store(dir.str());
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().find("less than its two meta pages"), std::string::npos) << s.error();
  }
}

TEST(data_file_check, a_data_file_that_is_not_a_regular_file_is_refused_without_waiting) {
  temp_dir dir;
  auto data = dir.path() / "data.mdb";
  ASSERT_EQ(::mkfifo(data.c_str(), 0600), 0);
  auto opened = std::async(std::launch::async, [&] { return open_store(dir.str()); });
  ASSERT_EQ(opened.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto s = opened.get();
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("not a regular file"), std::string::npos) << s.error();
}

TEST(data_file_check, a_file_of_something_else_is_refused) {
  temp_dir dir;
  xconn::test::write_file(dir.path() / "data.mdb", std::string(3 * 4096, 'x'));
  auto s = open_store(dir.str());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("not an LMDB data file"), std::string::npos) << s.error();
}

// The check reaches exactly the pages LMDB reaches: those a compacting copy keeps (it walks every tree: the main
// one, each named database with its overflow pages and dupsort sub-trees, and writes only those), plus the pages
// of the free-page tree, which the copy leaves out. It misses none and invents none.
TEST(data_file_check, the_walk_reaches_exactly_the_pages_lmdb_counts) {
  temp_dir dir;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  mdb_env_set_maxdbs(env, 8);
  mdb_env_set_mapsize(env, 1ull << 28);
  ASSERT_EQ(mdb_env_open(env, dir.str().c_str(), 0, 0600), 0);
  MDB_txn* txn = nullptr;
  MDB_dbi plain, dups, fixed;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  ASSERT_EQ(mdb_dbi_open(txn, "plain", MDB_CREATE, &plain), 0);
  ASSERT_EQ(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dups), 0);
  ASSERT_EQ(mdb_dbi_open(txn, "fixed", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &fixed), 0);
  auto put = [&](MDB_dbi dbi, std::string key, std::string value) {
    MDB_val k{key.size(), key.data()}, v{value.size(), value.data()};
    ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
  };
  for (int i = 0; i < 3000; ++i) put(plain, "k" + std::to_string(i), std::string(i % 7 == 0 ? 9000 : 90, 'p'));
  for (int i = 0; i < 4000; ++i) put(dups, "many", "dup-" + std::to_string(i));  // a dupsort sub-tree
  for (int i = 0; i < 50; ++i) put(dups, "few" + std::to_string(i), "d" + std::to_string(i));  // sub-pages
  for (int i = 0; i < 5000; ++i) put(fixed, "fixed", std::string(reinterpret_cast<char*>(&i), sizeof i));
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  // A second transaction frees pages: the free-page tree has records.
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  for (int i = 0; i < 3000; i += 2) {
    auto key = "k" + std::to_string(i);
    MDB_val k{key.size(), key.data()};
    ASSERT_EQ(mdb_del(txn, plain, &k, nullptr), 0);
  }
  ASSERT_EQ(mdb_txn_commit(txn), 0);

  ASSERT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), 0);
  MDB_stat free_tree{};
  ASSERT_EQ(mdb_stat(txn, 0, &free_tree), 0);
  mdb_txn_abort(txn);
  ASSERT_GT(free_tree.ms_leaf_pages, 0u);
  auto copy = dir.path() / "compact";
  std::filesystem::create_directory(copy);
  ASSERT_EQ(mdb_env_copy2(env, copy.c_str(), MDB_CP_COMPACT), 0);
  mdb_env_close(env);

  auto compact = load_file(copy / "data.mdb");
  auto kept = check(compact);
  ASSERT_TRUE(kept) << kept.error();
  EXPECT_EQ(kept->reachable_pages, compact.size() / kept->page_bytes);
  EXPECT_EQ(kept->last_reachable_page, compact.size() / kept->page_bytes - 1);
  auto facts = check(load_file(dir.path() / "data.mdb"));
  ASSERT_TRUE(facts) << facts.error();
  EXPECT_EQ(facts->reachable_pages,
            kept->reachable_pages + free_tree.ms_branch_pages + free_tree.ms_leaf_pages + free_tree.ms_overflow_pages);
}

// Hostile files, built page by page: each is refused with a reason, and nothing is read out of bounds.
constexpr std::uint32_t psize = 4096;

struct page_builder {
  bytes file;
  explicit page_builder(std::uint64_t pages) : file(pages * psize) {}
  unsigned char* at(std::uint64_t pgno) { return file.data() + pgno * psize; }
  template <class T>
  void put(unsigned char* p, T v) { std::memcpy(p, &v, sizeof v); }
  void meta(int i, std::uint64_t txnid, std::uint64_t last_pg, std::uint64_t free_root, std::uint64_t main_root) {
    auto* p = at(i);
    put<std::uint64_t>(p, i);
    put<std::uint16_t>(p + 10, 0x08);
    put<std::uint32_t>(p + 16, 0xBEEFC0DE);
    put<std::uint32_t>(p + 20, 1);
    put<std::uint32_t>(p + 40, psize);
    put<std::uint64_t>(p + 80, free_root);
    put<std::uint64_t>(p + 128, main_root);
    put<std::uint64_t>(p + 136, last_pg);
    put<std::uint64_t>(p + 144, txnid);
  }
  // A page of nodes: a branch's nodes name a child page, a leaf's carry flags and a data field.
  struct node {
    std::uint64_t child_or_size;
    std::uint16_t flags;
    bytes data;
  };
  void nodes(std::uint64_t pgno, std::uint16_t page_flags, const std::vector<node>& list) {
    auto* p = at(pgno);
    put<std::uint64_t>(p, pgno);
    put<std::uint16_t>(p + 10, page_flags);
    std::uint16_t upper = psize;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& n = list[i];
      upper = static_cast<std::uint16_t>(upper - 8 - n.data.size() - 2);
      auto* q = p + upper;
      put<std::uint16_t>(q, static_cast<std::uint16_t>(n.child_or_size));
      put<std::uint16_t>(q + 2, static_cast<std::uint16_t>(n.child_or_size >> 16));
      put<std::uint16_t>(q + 4, page_flags & 1 ? static_cast<std::uint16_t>(n.child_or_size >> 32) : n.flags);
      put<std::uint16_t>(q + 6, 1);  // a one-byte key
      q[8] = 'k';
      if (!n.data.empty()) std::memcpy(q + 9, n.data.data(), n.data.size());
      put<std::uint16_t>(p + 16 + 2 * i, upper);
    }
    put<std::uint16_t>(p + 12, static_cast<std::uint16_t>(16 + 2 * list.size()));
    put<std::uint16_t>(p + 14, upper);
  }
  static bytes pgno_bytes(std::uint64_t pgno) {
    bytes b(8);
    std::memcpy(b.data(), &pgno, 8);
    return b;
  }
  static bytes db_bytes(std::uint64_t root) {
    bytes b(48);
    std::memcpy(b.data() + 40, &root, 8);
    return b;
  }
};

constexpr std::uint64_t no_page = ~std::uint64_t{0};

std::string refusal(const bytes& file) {
  auto r = check(file);
  return r ? std::string("accepted") : r.error();
}

TEST(data_file_check, a_well_formed_hand_built_file_is_accepted) {
  page_builder b(6);
  b.meta(0, 1, 5, no_page, 2);
  b.meta(1, 0, 1, no_page, no_page);
  b.nodes(2, 0x01, {{3, 0, {}}, {4, 0, {}}});
  b.nodes(3, 0x02, {{1, 0, {'v'}}});
  b.nodes(4, 0x02, {{8000, 0x01, page_builder::pgno_bytes(5)}});
  b.put<std::uint64_t>(b.at(5), 5);
  b.put<std::uint16_t>(b.at(5) + 10, 0x04);
  b.put<std::uint32_t>(b.at(5) + 12, 1);  // one page too few for 8000 bytes
  EXPECT_NE(refusal(b.file).find("longer than its pages"), std::string::npos) << refusal(b.file);
  b.file.resize(7 * psize);
  b.meta(0, 1, 6, no_page, 2);
  b.put<std::uint32_t>(b.at(5) + 12, 2);
  auto facts = check(b.file);
  ASSERT_TRUE(facts) << facts.error();
  EXPECT_EQ(facts->reachable_pages, 2u + 3u + 2u);
  EXPECT_EQ(facts->last_reachable_page, 6u);
}

TEST(data_file_check, hostile_meta_pages_are_refused) {
  {
    page_builder b(4);  // the root past the file's end, and past the meta page's last page
    b.meta(0, 1, 3, no_page, 1'000'000);
    b.meta(1, 0, 3, no_page, no_page);
    EXPECT_NE(refusal(b.file).find("outside pages 2..3"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(4);  // counted by the meta page but past the end of the file
    b.meta(0, 1, 100, no_page, 50);
    b.meta(1, 0, 3, no_page, no_page);
    EXPECT_NE(refusal(b.file).find("cut short"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(4);  // a root on a meta page
    b.meta(0, 1, 3, 1, no_page);
    b.meta(1, 0, 3, no_page, no_page);
    EXPECT_NE(refusal(b.file).find("outside pages"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(4);  // a last page whose size overflows
    b.meta(0, 1, no_page - 1, no_page, no_page);
    b.meta(1, 0, 3, no_page, no_page);
    EXPECT_NE(refusal(b.file).find("as the last page"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(4);  // page sizes that are no page size
    b.meta(0, 1, 3, no_page, no_page);
    b.meta(1, 0, 3, no_page, no_page);
    b.put<std::uint32_t>(b.at(0) + 40, 100);
    EXPECT_NE(refusal(b.file).find("page size of 100"), std::string::npos) << refusal(b.file);
    b.put<std::uint32_t>(b.at(0) + 40, 0);
    EXPECT_NE(refusal(b.file).find("page size of 0"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(4);  // the second meta page is no meta page
    b.meta(0, 1, 3, no_page, no_page);
    EXPECT_NE(refusal(b.file).find("meta page 1 is not one"), std::string::npos) << refusal(b.file);
  }
}

// The start walks only a file shorter than its meta page counts (a whole file cannot hide a page of a valid tree
// past its end, and a walk of a large store costs seconds); the roots of the meta page are checked either way.
TEST(data_file_check, at_start_a_whole_file_is_not_walked_but_its_roots_are_checked) {
  page_builder b(4);
  b.meta(0, 1, 3, no_page, 2);
  b.meta(1, 0, 3, no_page, no_page);
  b.nodes(2, 0x01, {{2, 0, {}}});  // a loop the walk would find
  auto when_short = check_data_pages(b.file.size(), reader_of(b.file), xconn::data_file_walk::when_short);
  ASSERT_TRUE(when_short) << when_short.error();
  EXPECT_FALSE(when_short->walked);
  EXPECT_EQ(when_short->needed_bytes, 4u * psize);
  EXPECT_NE(refusal(b.file).find("reached twice"), std::string::npos);

  b.meta(0, 1, 3, 7, 2);  // a root past the pages the meta page counts, in a whole file
  when_short = check_data_pages(b.file.size(), reader_of(b.file), xconn::data_file_walk::when_short);
  ASSERT_FALSE(when_short);
  EXPECT_NE(when_short.error().find("root at page 7, outside pages 2..3"), std::string::npos) << when_short.error();

  b.meta(0, 1, 5, no_page, 2);  // short: walked, and the loop is found
  when_short = check_data_pages(b.file.size(), reader_of(b.file), xconn::data_file_walk::when_short);
  ASSERT_FALSE(when_short);
  EXPECT_NE(when_short.error().find("reached twice"), std::string::npos) << when_short.error();
}

// A real store whose newest meta page was overwritten with a hostile root: refused at open, no crash.
TEST(data_file_check, a_store_with_a_hostile_meta_page_is_refused_without_crashing) {
  temp_dir dir;
  auto data = dir.path() / "data.mdb";
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s) << s.error();
    ASSERT_FALSE((*s)->write_sync(write_batch{}.put("a", "k", "v")));
  }
  auto file = load_file(data);
  auto facts = check(file);
  ASSERT_TRUE(facts) << facts.error();
  auto psize = facts->page_bytes;
  std::uint64_t txn0, txn1;
  std::memcpy(&txn0, file.data() + 144, 8);
  std::memcpy(&txn1, file.data() + psize + 144, 8);
  auto* newest = file.data() + (txn1 > txn0 ? psize : 0);
  for (std::uint64_t root : {std::uint64_t{1} << 40, std::uint64_t{0}}) {
    SCOPED_TRACE(root);
    std::memcpy(newest + 128, &root, 8);  // the main tree's root
    xconn::test::write_file(data, std::string(file.begin(), file.end()));
    auto s = open_store(dir.str());
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().find("data.mdb is damaged: its meta page has a root at page " + std::to_string(root)),
              std::string::npos) << s.error();
  }
}

TEST(data_file_check, the_newest_meta_page_is_the_one_walked) {
  page_builder b(4);
  b.meta(0, 7, 3, no_page, no_page);  // older: an empty store
  b.meta(1, 8, 3, no_page, 3);        // newer: its root page is broken
  EXPECT_NE(refusal(b.file).find("page 3 says it is page 0"), std::string::npos) << refusal(b.file);
  b.meta(0, 9, 3, no_page, no_page);
  EXPECT_TRUE(check(b.file));
}

TEST(data_file_check, loops_and_endless_depth_are_refused_without_running_away) {
  {
    page_builder b(3);  // a branch that is its own child
    b.meta(0, 1, 2, no_page, 2);
    b.meta(1, 0, 2, no_page, no_page);
    b.nodes(2, 0x01, {{2, 0, {}}});
    EXPECT_NE(refusal(b.file).find("page 2 is reached twice (a loop)"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(4);  // two branches pointing at each other
    b.meta(0, 1, 3, no_page, 2);
    b.meta(1, 0, 3, no_page, no_page);
    b.nodes(2, 0x01, {{3, 0, {}}});
    b.nodes(3, 0x01, {{2, 0, {}}});
    EXPECT_NE(refusal(b.file).find("reached twice"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(4);  // a named database whose root is the main tree's own root
    b.meta(0, 1, 3, no_page, 2);
    b.meta(1, 0, 3, no_page, no_page);
    b.nodes(2, 0x02, {{48, 0x02, page_builder::db_bytes(2)}});
    EXPECT_NE(refusal(b.file).find("reached twice"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(60);  // a chain of 57 branch pages, each with one child
    b.meta(0, 1, 59, no_page, 2);
    b.meta(1, 0, 59, no_page, no_page);
    for (std::uint64_t p = 2; p < 59; ++p) b.nodes(p, 0x01, {{p + 1, 0, {}}});
    b.nodes(59, 0x02, {});
    EXPECT_NE(refusal(b.file).find("deeper than 32 levels"), std::string::npos) << refusal(b.file);
  }
  {
    page_builder b(6);  // named databases nested four deep
    b.meta(0, 1, 5, no_page, 2);
    b.meta(1, 0, 5, no_page, no_page);
    for (std::uint64_t p = 2; p < 5; ++p) b.nodes(p, 0x02, {{48, 0x02, page_builder::db_bytes(p + 1)}});
    b.nodes(5, 0x02, {});
    EXPECT_NE(refusal(b.file).find("nest deeper"), std::string::npos) << refusal(b.file);
  }
}

TEST(data_file_check, broken_pages_and_nodes_are_refused) {
  auto with_root_page = [](auto fill) {
    page_builder b(4);
    b.meta(0, 1, 3, no_page, 2);
    b.meta(1, 0, 3, no_page, no_page);
    fill(b);
    return refusal(b.file);
  };
  EXPECT_NE(with_root_page([](page_builder& b) { b.nodes(2, 0x04, {}); }).find("neither a branch nor a leaf"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) { b.nodes(2, 0x03, {}); }).find("neither a branch nor a leaf"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) {
              b.nodes(2, 0x02, {{1, 0, {'v'}}});
              b.put<std::uint16_t>(b.at(2) + 14, 5000);  // upper past the page
            }).find("broken header"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) {
              b.nodes(2, 0x02, {{1, 0, {'v'}}});
              b.put<std::uint16_t>(b.at(2) + 16, 4094);  // a node that starts 2 bytes before the end
            }).find("node outside it"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) {
              b.nodes(2, 0x02, {{1, 0, {'v'}}});
              auto at = *reinterpret_cast<std::uint16_t*>(b.at(2) + 16);
              b.put<std::uint16_t>(b.at(2) + at + 6, 60000);  // a key longer than the page
            }).find("key past its end"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) {
              b.nodes(2, 0x02, {{48, 0x02, page_builder::db_bytes(3)}});
              auto at = *reinterpret_cast<std::uint16_t*>(b.at(2) + 16);
              b.put<std::uint16_t>(b.at(2) + at, 47);  // a sub-database record of the wrong size
            }).find("broken sub-database"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) {
              b.nodes(2, 0x02, {{100, 0x01, page_builder::pgno_bytes(3)}});  // page 3 is no overflow page
              b.put<std::uint64_t>(b.at(3), 3);
            }).find("not the overflow page"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) {
              b.nodes(2, 0x02, {{100, 0x01, page_builder::pgno_bytes(3)}});
              b.put<std::uint64_t>(b.at(3), 3);
              b.put<std::uint16_t>(b.at(3) + 10, 0x04);
              b.put<std::uint32_t>(b.at(3) + 12, 0xFFFFFFFF);  // four billion pages
            }).find("outside pages"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) {
              b.nodes(2, 0x02, {{100, 0x01, page_builder::pgno_bytes(2)}});  // a value back into the tree
            }).find("not the overflow page"),
            std::string::npos);
  EXPECT_NE(with_root_page([](page_builder& b) { b.nodes(2, 0x02, {{100, 0x01, page_builder::pgno_bytes(9)}}); })
                .find("outside pages 2..3"),
            std::string::npos);
}

// Every prefix of a real data file is either accepted (only free pages missing) or refused; none crashes.
TEST(data_file_check, every_cut_of_a_real_file_is_accepted_or_refused) {
  temp_dir dir;
  {
    auto s = open_store(dir.str());
    ASSERT_TRUE(s) << s.error();
    write_batch batch;
    for (int i = 0; i < 300; ++i) batch.put("a", "key-" + std::to_string(i), std::string(i % 10 == 0 ? 6000 : 300, 'v'));
    ASSERT_FALSE((*s)->write_sync(std::move(batch)));
    write_and_erase_in_one_transaction(**s);
  }
  auto whole = load_file(dir.path() / "data.mdb");
  auto facts = check(whole);
  ASSERT_TRUE(facts) << facts.error();
  int accepted = 0, refused = 0;
  for (std::size_t size = 0; size <= whole.size(); size += 1024) {
    auto r = check_data_pages(size, [&](std::uint64_t offset, std::span<unsigned char> out) -> std::size_t {
      if (offset >= size) return 0;
      auto n = std::min<std::uint64_t>(out.size(), size - offset);
      std::memcpy(out.data(), whole.data() + offset, n);
      return n;
    });
    bool whole_enough = size >= (facts->last_reachable_page + 1) * facts->page_bytes;
    EXPECT_EQ(bool(r), whole_enough) << size << ": " << (r ? "accepted" : r.error());
    ++(r ? accepted : refused);
  }
  EXPECT_GT(refused, 10);
  EXPECT_GE(accepted, 1);
}

// {store}/reserve must be a file the store made: a FIFO there hung the start (opened for writing, it waits for a
// reader), a symbolic link would be followed.
TEST(data_file_check, a_reserve_that_is_not_a_regular_file_is_refused_without_waiting) {
  temp_dir dir;
  auto reserve = dir.path() / "reserve";
  ASSERT_EQ(::mkfifo(reserve.c_str(), 0600), 0);
  auto opened = std::async(std::launch::async, [&] {
    return store::open({dir.str(), 1ull << 30, {"a"}, 1ull << 20});
  });
  if (opened.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    int unblock = ::open(reserve.c_str(), O_RDONLY | O_NONBLOCK);  // let the blocked open return
    opened.wait();
    ::close(unblock);
    FAIL() << "the store's open waited on the FIFO at " << reserve;
  }
  auto s = opened.get();
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("reserve is not a regular file"), std::string::npos) << s.error();

  std::filesystem::remove(reserve);
  std::filesystem::create_symlink(dir.path() / "elsewhere", reserve);
  s = store::open({dir.str(), 1ull << 30, {"a"}, 1ull << 20});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("reserve is not a regular file"), std::string::npos) << s.error();
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "elsewhere"));

  std::filesystem::remove(reserve);
  s = store::open({dir.str(), 1ull << 30, {"a"}, 1ull << 20});
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(std::filesystem::file_size(reserve), 1u << 20);
}

}  // namespace data_file_check_test
