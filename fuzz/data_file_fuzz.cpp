// The store's start-up check of data.mdb (check_data_pages in core/store/data_file_check.cpp), fed a whole data
// file: meta pages, B-tree pages, overflow runs and sub-databases as the input has them. Checked: an accepted file
// has a page size LMDB allows, holds its two meta pages and every page reached (last_reachable_page inside the
// file, no more pages reached than it has), and stays accepted with the same facts once extended with zeros to
// the size its meta page counts (what the start does to a sparse tail); the start's cheaper mode (a walk only
// when the file is short) accepts it too. The walk must end on any input.
#include "core/store/data_file_check.hpp"
#include "fuzz/fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace xconn;
  // Reads the input, then zeros up to file_bytes.
  auto reader = [&](std::uint64_t file_bytes) {
    return [=](std::uint64_t offset, std::span<unsigned char> out) -> std::size_t {
      if (offset >= file_bytes) return 0;
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), file_bytes - offset));
      for (std::size_t i = 0; i < n; ++i) out[i] = offset + i < size ? data[offset + i] : 0;
      return n;
    };
  };
  auto facts = check_data_pages(size, reader(size));
  // The start's cheaper check (a walk only when the file is short) refuses nothing the full walk accepts.
  auto start = check_data_pages(size, reader(size), data_file_walk::when_short);
  if (!facts) {
    FUZZ_CHECK(!facts.error().empty());
    return 0;
  }
  FUZZ_CHECK(start && start->needed_bytes == facts->needed_bytes && start->page_bytes == facts->page_bytes);
  FUZZ_CHECK(facts->walked && start->walked == (size < facts->needed_bytes));
  const auto psize = facts->page_bytes;
  FUZZ_CHECK(psize >= 512 && psize <= 65536 && (psize & (psize - 1)) == 0);
  FUZZ_CHECK(size >= 2ull * psize);
  FUZZ_CHECK(facts->needed_bytes >= 2ull * psize && facts->needed_bytes % psize == 0);
  FUZZ_CHECK((facts->last_reachable_page + 1) * psize <= size);
  FUZZ_CHECK(facts->reachable_pages >= 2 && facts->reachable_pages <= size / psize);
  FUZZ_CHECK((facts->last_reachable_page + 1) * psize <= facts->needed_bytes);

  // The start's extension: zeros past the end change nothing the trees reach.
  if (facts->needed_bytes > size && facts->needed_bytes <= (64u << 20)) {
    auto extended = check_data_pages(facts->needed_bytes, reader(facts->needed_bytes));
    FUZZ_CHECK(extended && extended->reachable_pages == facts->reachable_pages &&
               extended->last_reachable_page == facts->last_reachable_page &&
               extended->needed_bytes == facts->needed_bytes);
  }
  return 0;
}
