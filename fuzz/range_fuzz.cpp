// The Range header parser of downloads (parse_range in core/wire/http_types.cpp), fed a header value and a file
// size taken from the input's first 8 bytes. Checked: a satisfiable range lies inside the file (first <= last <
// size, so the body length last - first + 1 neither underflows nor overruns), an unsatisfiable one is the {1, 0}
// marker, the parser refuses several ranges, and a range parsed for a file of size n keeps its first byte for any
// larger file (the parse depends on the size only through clamping).
#include "core/wire/http_types.hpp"
#include "fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace xconn;
  std::uint64_t file_size = 0;
  if (size >= sizeof file_size) {
    std::memcpy(&file_size, data, sizeof file_size);
    data += sizeof file_size;
    size -= sizeof file_size;
  }
  // Small sizes too, not only what eight random bytes give.
  if (file_size >> 63) file_size &= 0xffff;
  const std::string_view header(reinterpret_cast<const char*>(data), size);

  auto r = parse_range(header, file_size);
  if (!r) return 0;
  FUZZ_CHECK(header.starts_with("bytes=") && header.find(',') == std::string_view::npos);
  if (!r->satisfiable()) {
    FUZZ_CHECK(r->first == 1 && r->last == 0);
    return 0;
  }
  FUZZ_CHECK(file_size > 0 && r->first <= r->last && r->last < file_size);
  FUZZ_CHECK(r->last - r->first + 1 <= file_size);

  // A suffix range ("bytes=-n") moves with the size; a range from a first byte keeps it.
  if (file_size < std::numeric_limits<std::uint64_t>::max() && header.substr(6, 1) != "-") {
    auto bigger = parse_range(header, file_size + 1);
    FUZZ_CHECK(bigger && bigger->satisfiable() && bigger->first == r->first && bigger->last >= r->last);
  }
  return 0;
}
