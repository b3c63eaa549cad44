#include "core/store/data_file_check.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>
#include <vector>

namespace xconn {

namespace {

// LMDB 0.9's on-disk layout (mdb.c: MDB_page, MDB_meta, MDB_db, MDB_node) on a 64-bit little-endian machine,
// where pgno_t and txnid_t are size_t. Offsets are from the start of a page or a node.
static_assert(sizeof(std::size_t) == 8, "LMDB's page numbers are 8 bytes here");
constexpr std::size_t page_header = 16;  // mp_pgno (8), mp_pad (2), mp_flags (2), mp_lower/mp_upper or mp_pages (4)
constexpr std::size_t at_pgno = 0, at_flags = 10, at_lower = 12, at_upper = 14, at_pages = 12;
constexpr std::uint16_t p_branch = 0x01, p_leaf = 0x02, p_overflow = 0x04, p_meta = 0x08, p_leaf2 = 0x20;
// MDB_meta follows the page header: magic, version, address, mapsize, then the free and main MDB_db.
constexpr std::size_t at_magic = 16, at_version = 20, at_dbs = 40, at_last_pg = 136, at_txnid = 144, meta_end = 152;
constexpr std::uint32_t lmdb_magic = 0xBEEFC0DE, lmdb_data_version = 1;
// MDB_db (48 bytes): md_pad (the page size, in the free db of a meta page), md_flags, md_depth, counts, md_root.
constexpr std::size_t db_bytes = 48, db_pad = 0, db_root = 40;
// MDB_node: mn_lo, mn_hi (data size, or with mn_flags a branch's child page), mn_flags, mn_ksize, then key and data.
constexpr std::size_t node_header = 8;
constexpr std::uint16_t f_bigdata = 0x01, f_subdata = 0x02;
constexpr std::uint64_t no_page = std::numeric_limits<std::uint64_t>::max();  // P_INVALID: an empty tree
constexpr std::uint64_t meta_pages = 2;
// LMDB's cursors stop at 32 levels (CURSOR_STACK); trees nest main → named database → dupsort sub-tree.
constexpr int max_depth = 32, max_nesting = 3;

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string page_name(std::uint64_t pgno) { return "page " + std::to_string(pgno); }

class tree_walk {
 public:
  tree_walk(std::uint64_t file_bytes, std::uint32_t psize, std::uint64_t last_pg, const data_file_reader& read)
      : file_bytes_(file_bytes), psize_(psize), last_pg_(last_pg), read_(read),
        seen_(static_cast<std::size_t>(file_bytes / psize)) {}

  // Walks one tree; the error says what is wrong.
  std::optional<std::string> tree(std::uint64_t root, int nesting) {
    if (root == no_page) return std::nullopt;
    if (nesting >= max_nesting) return damaged("trees nest deeper than " + std::to_string(max_nesting) + " levels");
    return page(root, 1, nesting);
  }

  std::uint64_t visited() const { return visited_; }
  std::uint64_t last() const { return last_; }

 private:
  static std::string damaged(const std::string& what) {
    return "data.mdb is damaged: " + what + " (restore it from a backup)";
  }

  std::string cut_short(std::uint64_t pgno, std::uint64_t pages) const {
    return "data.mdb holds " + std::to_string(file_bytes_) + " bytes but " + page_name(pgno) +
           ", which its B-trees reach, needs " + std::to_string((pgno + pages) * psize_) +
           ": the file was cut short (restore it from a backup)";
  }

  // A reachable page: a page of the file past the meta pages, counted by the meta page, read once.
  std::optional<std::string> claim(std::uint64_t pgno, std::uint64_t pages) {
    if (pgno < meta_pages || pgno > last_pg_ || pages == 0 || pages > last_pg_ - pgno + 1)
      return damaged("a B-tree points to " + page_name(pgno) + (pages > 1 ? " (" + std::to_string(pages) + " pages)" : "") +
                     ", outside pages 2.." + std::to_string(last_pg_));
    if (pgno + pages > seen_.size()) return cut_short(pgno, pages);
    for (std::uint64_t p = pgno; p < pgno + pages; ++p) {
      if (seen_[p]) return damaged(page_name(p) + " is reached twice (a loop)");
      seen_[p] = true;
    }
    visited_ += pages;
    last_ = std::max(last_, pgno + pages - 1);
    return std::nullopt;
  }

  std::vector<unsigned char>& level_buffer(int level) {
    auto& buf = buffers_[static_cast<std::size_t>(level)];
    buf.resize(psize_);
    return buf;
  }

  std::optional<std::string> read_page(std::uint64_t pgno, std::vector<unsigned char>& buf) {
    if (read_(pgno * psize_, buf) != psize_) return cut_short(pgno, 1);
    if (load<std::uint64_t>(buf.data() + at_pgno) != pgno)
      return damaged(page_name(pgno) + " says it is page " + std::to_string(load<std::uint64_t>(buf.data() + at_pgno)));
    return std::nullopt;
  }

  std::optional<std::string> page(std::uint64_t pgno, int depth, int nesting) {
    if (depth > max_depth) return damaged("a B-tree deeper than " + std::to_string(max_depth) + " levels");
    if (auto e = claim(pgno, 1)) return e;
    // One buffer per level of recursion, reused: a walk reads every page of the trees.
    auto& buf = level_buffer(depth + nesting * max_depth);
    if (auto e = read_page(pgno, buf)) return e;
    auto flags = load<std::uint16_t>(buf.data() + at_flags);
    bool branch = flags & p_branch, leaf = flags & p_leaf;
    if (branch == leaf) return damaged(page_name(pgno) + " is neither a branch nor a leaf page");
    if (flags & p_leaf2) return std::nullopt;  // keys of fixed size only, nothing to follow
    auto lower = load<std::uint16_t>(buf.data() + at_lower), upper = load<std::uint16_t>(buf.data() + at_upper);
    if (lower < page_header || lower > upper || upper > psize_)
      return damaged(page_name(pgno) + " has a broken header");
    std::size_t keys = (lower - page_header) / 2;
    for (std::size_t i = 0; i < keys; ++i) {
      std::size_t at = load<std::uint16_t>(buf.data() + page_header + 2 * i);
      if (at < upper || at + node_header > psize_) return damaged(page_name(pgno) + " has a node outside it");
      const unsigned char* node = buf.data() + at;
      auto lo = load<std::uint16_t>(node), hi = load<std::uint16_t>(node + 2);
      auto node_flags = load<std::uint16_t>(node + 4), key_bytes = load<std::uint16_t>(node + 6);
      std::size_t room = psize_ - at - node_header;
      if (key_bytes > room) return damaged(page_name(pgno) + " has a key past its end");
      room -= key_bytes;
      const unsigned char* data = node + node_header + key_bytes;
      if (branch) {
        std::uint64_t child = lo | std::uint64_t{hi} << 16 | std::uint64_t{node_flags} << 32;
        if (auto e = page(child, depth + 1, nesting)) return e;
        continue;
      }
      std::size_t data_bytes = lo | std::size_t{hi} << 16;
      if (node_flags & f_bigdata) {
        if (room < sizeof(std::uint64_t)) return damaged(page_name(pgno) + " has a value past its end");
        if (auto e = overflow(load<std::uint64_t>(data), data_bytes)) return e;
      } else if (node_flags & f_subdata) {  // a named database (main tree) or a dupsort sub-tree
        if (data_bytes != db_bytes || room < db_bytes) return damaged(page_name(pgno) + " has a broken sub-database");
        if (auto e = tree(load<std::uint64_t>(data + db_root), nesting + 1)) return e;
      }
      // Else the value, or a dupsort sub-page, is inside this page.
    }
    return std::nullopt;
  }

  // A value on its own run of pages: the first page's header counts them, and all must be in the file.
  std::optional<std::string> overflow(std::uint64_t pgno, std::size_t value_bytes) {
    if (pgno < meta_pages || pgno > last_pg_)
      return damaged("a value points to " + page_name(pgno) + ", outside pages 2.." + std::to_string(last_pg_));
    auto& buf = level_buffer(0);  // level 0 is no tree page's
    if (pgno >= seen_.size()) return cut_short(pgno, 1);
    if (auto e = read_page(pgno, buf)) return e;
    if (!(load<std::uint16_t>(buf.data() + at_flags) & p_overflow))
      return damaged(page_name(pgno) + " is not the overflow page a value points to");
    std::uint64_t pages = load<std::uint32_t>(buf.data() + at_pages);
    if (pages * psize_ < value_bytes + page_header)
      return damaged("the value on " + page_name(pgno) + " is longer than its pages");
    return claim(pgno, pages);
  }

  std::uint64_t file_bytes_;
  std::uint32_t psize_;
  std::uint64_t last_pg_;
  const data_file_reader& read_;
  std::vector<bool> seen_;  // one bit per whole page of the file: no page is read twice
  std::array<std::vector<unsigned char>, max_depth * max_nesting + 1> buffers_;
  std::uint64_t visited_ = 0;
  std::uint64_t last_ = meta_pages - 1;
};

}  // namespace

boost::system::result<data_file_facts, std::string> check_data_pages(std::uint64_t file_bytes,
                                                                     const data_file_reader& read,
                                                                     data_file_walk how) {
  auto short_file = [&] {
    return "data.mdb holds " + std::to_string(file_bytes) +
           " bytes, less than its two meta pages: the file was cut short (restore it from a backup)";
  };
  // The meta pages: the first tells the page size, the second starts there; the newer transaction wins.
  unsigned char meta[2][meta_end];
  std::uint32_t psize = 0;
  for (int i = 0; i < 2; ++i) {
    std::uint64_t offset = i == 0 ? 0 : psize;
    if (offset + meta_end > file_bytes || read(offset, meta[i]) != meta_end) return short_file();
    if (!(load<std::uint16_t>(meta[i] + at_flags) & p_meta) || load<std::uint32_t>(meta[i] + at_magic) != lmdb_magic)
      return "data.mdb is not an LMDB data file (meta page " + std::to_string(i) + " is not one)";
    if (load<std::uint32_t>(meta[i] + at_version) != lmdb_data_version)
      return "data.mdb has LMDB data format " + std::to_string(load<std::uint32_t>(meta[i] + at_version)) +
             ", not " + std::to_string(lmdb_data_version);
    auto size = load<std::uint32_t>(meta[i] + at_dbs + db_pad);
    if (i == 0) psize = size;
    if (size != psize || size < 512 || size > 65536 || (size & (size - 1)) != 0)
      return "data.mdb is damaged: meta page " + std::to_string(i) + " gives a page size of " + std::to_string(size) +
             " (restore it from a backup)";
  }
  if (file_bytes < meta_pages * psize) return short_file();
  const unsigned char* newest =
      load<std::uint64_t>(meta[0] + at_txnid) < load<std::uint64_t>(meta[1] + at_txnid) ? meta[1] : meta[0];
  auto last_pg = load<std::uint64_t>(newest + at_last_pg);
  if (last_pg < meta_pages - 1 || last_pg >= std::numeric_limits<std::uint64_t>::max() / 2 / psize)
    return "data.mdb is damaged: its meta page counts " + std::to_string(last_pg) + " as the last page (restore it " +
           "from a backup)";

  const std::uint64_t roots[] = {load<std::uint64_t>(newest + at_dbs + db_root),  // the free-page tree
                                 load<std::uint64_t>(newest + at_dbs + db_bytes + db_root)};  // the main one
  for (auto root : roots)
    if (root != no_page && (root < meta_pages || root > last_pg))
      return "data.mdb is damaged: its meta page has a root at " + page_name(root) + ", outside pages 2.." +
             std::to_string(last_pg) + " (restore it from a backup)";
  data_file_facts facts{psize, (last_pg + 1) * psize, meta_pages, meta_pages - 1, false};
  if (how == data_file_walk::when_short && file_bytes >= facts.needed_bytes) return facts;
  tree_walk walk(file_bytes, psize, last_pg, read);
  for (auto root : roots)
    if (auto e = walk.tree(root, 0)) return *e;
  facts.reachable_pages += walk.visited();
  facts.last_reachable_page = walk.last();
  facts.walked = true;
  return facts;
}

boost::system::result<void, std::string> prepare_data_file(const std::string& data_file) {
  // Non-blocking and checked for a regular file: a FIFO there must not hang the start.
  int fd = ::open(data_file.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return {};  // a new store
  if (fd < 0) return "data.mdb: " + std::generic_category().message(errno);
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "data.mdb: " + std::generic_category().message(errno);
  if (!S_ISREG(st.st_mode)) return std::string("data.mdb is not a regular file");
  auto file_bytes = static_cast<std::uint64_t>(st.st_size);
  // LMDB would take an empty file for a new store: a store emptied by accident would start over unnoticed.
  if (file_bytes == 0)
    return std::string("data.mdb is empty (0 bytes): restore it from a backup, or delete it to start an empty store");

  data_file_reader read = [fd](std::uint64_t offset, std::span<unsigned char> out) -> std::size_t {
    std::size_t done = 0;
    while (done < out.size()) {
      auto n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  };
  auto facts = check_data_pages(file_bytes, read, data_file_walk::when_short);
  if (!facts) return facts.error();
  if (file_bytes >= facts->needed_bytes) return {};
  // Only free pages lie past the end: zeros, what a hole reads as. Grown only if still short (never shrunk).
  if (::fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < facts->needed_bytes &&
      ::ftruncate(fd, static_cast<off_t>(facts->needed_bytes)) != 0)
    return "data.mdb holds " + std::to_string(file_bytes) + " bytes, its meta page counts " +
           std::to_string(facts->needed_bytes) + ", and it cannot be extended: " +
           std::generic_category().message(errno);
  spdlog::warn("store: data.mdb held {} bytes of the {} its meta page counts; every page its B-trees reach was there "
               "(the rest are free pages a transaction allocated and freed without writing): extended with zeros",
               file_bytes, facts->needed_bytes);
  return {};
}

}  // namespace xconn
