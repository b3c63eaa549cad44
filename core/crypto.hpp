// Digests and comparisons with libcrypto (OpenSSL): no hand-rolled cryptography.
#pragma once

#include <string>
#include <string_view>

namespace xconn {

std::string sha256_hex(std::string_view data);

// Equal in time that depends only on the lengths of the digests, not on where a and b differ.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace xconn
