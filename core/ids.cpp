#include "core/ids.hpp"

#include <openssl/rand.h>

#include <array>
#include <chrono>
#include <stdexcept>

namespace xconn {
namespace {

void fill_random(unsigned char* out, std::size_t n) {
  // An id or key from a failed CSPRNG would be guessable: refuse rather than degrade.
  if (n > 0 && RAND_bytes(out, static_cast<int>(n)) != 1) throw std::runtime_error("RAND_bytes failed");
}

}  // namespace

std::string random_id(std::string_view prefix, std::size_t n) {
  static constexpr char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  // Bytes >= 248 (= 4 * 62) are rejected so that every character is equally likely (no modulo bias).
  static constexpr unsigned limit = 4 * 62;
  std::string out(prefix);
  out.reserve(prefix.size() + n);
  std::array<unsigned char, 64> pool{};
  while (out.size() < prefix.size() + n) {
    fill_random(pool.data(), pool.size());
    for (unsigned char b : pool) {
      if (b >= limit) continue;
      out.push_back(alphabet[b % 62]);
      if (out.size() == prefix.size() + n) break;
    }
  }
  return out;
}

std::string random_hex(std::size_t bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string raw(bytes, '\0');
  fill_random(reinterpret_cast<unsigned char*>(raw.data()), bytes);
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char b : raw) {
    out.push_back(hex[b >> 4]);
    out.push_back(hex[b & 15]);
  }
  return out;
}

long long unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace xconn
