// Random identifiers and keys: unguessable ones from the CSPRNG, merely unique ones from a seeded generator.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace xconn {

// prefix + n random base62 characters (e.g. "cch_" + 22).
std::string random_id(std::string_view prefix, std::size_t n = 22);

// prefix + n base62 characters for ids that must be unique but need not be secret (message and packet ids, one
// or more per message): a per-thread generator seeded once from the CSPRNG, so no system call per id.
std::string unique_id(std::string_view prefix, std::size_t n = 22);

// n random bytes as lowercase hex.
std::string random_hex(std::size_t bytes);

// The current wall clock in unix milliseconds.
long long unix_ms();

}  // namespace xconn
