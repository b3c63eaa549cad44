// The start-up check of LMDB's data.mdb, done with plain reads before LMDB maps the file.
//
// LMDB maps the whole file and reads a page wherever a B-tree points: a page past the file's end ends the process
// with SIGBUS. Yet a whole file may be shorter than its meta page's "last page": a page allocated and freed inside
// one write transaction is never written (an upload erased in the transaction that wrote its chunks leaves such a
// tail). So the size alone cannot tell a file cut short from a sparse tail; the pages the trees reach can. Every
// page of the newest meta's free-page and main trees, of each named database, each overflow run and each dupsort
// sub-tree is read with pread and must lie inside the file. Then a shorter file holds only free pages past its end,
// and extending it with zeros (what those pages read as anyway) makes it safe to map.
#pragma once

#include <boost/system/result.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace xconn {

// Reads out.size() bytes at offset; returns how many it read (fewer at the end of the file).
using data_file_reader = std::function<std::size_t(std::uint64_t offset, std::span<unsigned char> out)>;

struct data_file_facts {
  std::uint32_t page_bytes = 0;
  std::uint64_t needed_bytes = 0;     // (last page + 1) × page size, from the newest meta page
  std::uint64_t reachable_pages = 0;  // meta pages, tree pages and overflow pages
  std::uint64_t last_reachable_page = 1;  // past it, only free pages: the file may end there
  bool walked = false;                    // the trees were walked (else the counts above are the meta pages')
};

// every_tree: always walk. when_short: walk only a file shorter than its meta page counts; a whole file cannot
// have a page of a valid tree past its end, and walking a large store costs seconds at every start.
enum class data_file_walk { every_tree, when_short };

// Checks a data file of file_bytes: two valid meta pages whose tree roots lie inside the pages they count, and
// (walked) every page the newest one's trees reach inside the file, each read once. The walk is bounded (depth 32
// per tree, three levels of nested trees, no page twice), so a hostile file cannot loop it. The error says why the
// file cannot be opened (it names no key or value).
boost::system::result<data_file_facts, std::string> check_data_pages(
    std::uint64_t file_bytes, const data_file_reader& read, data_file_walk walk = data_file_walk::every_tree);

// The step before mdb_env_open for {folder}/data.mdb. Absent: nothing to do (LMDB creates a new store). Empty,
// shorter than two pages, not a regular file, damaged, or with a reachable page past its end: the error. Whole but
// shorter than its meta page says (a sparse tail of free pages): extended with zeros to that size, logged once.
boost::system::result<void, std::string> prepare_data_file(const std::string& data_file);

}  // namespace xconn
