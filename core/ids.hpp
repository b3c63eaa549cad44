// Random identifiers and keys: unguessable, from the operating system's random source.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace xconn {

// prefix + n random base62 characters (e.g. "cch_" + 22).
std::string random_id(std::string_view prefix, std::size_t n = 22);

// n random bytes as lowercase hex.
std::string random_hex(std::size_t bytes);

// The current wall clock in unix milliseconds.
long long unix_ms();

}  // namespace xconn
