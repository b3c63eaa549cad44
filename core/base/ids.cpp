#include "core/base/ids.hpp"

#include <openssl/rand.h>

#include <array>
#include <chrono>
#include <cstdint>
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

namespace {

// xoshiro256**: fast, 2^256 - 1 period; seeded per thread from RAND_bytes, so threads never share a sequence.
class id_generator {
 public:
  id_generator() {
    do fill_random(reinterpret_cast<unsigned char*>(s_), sizeof s_);
    while ((s_[0] | s_[1] | s_[2] | s_[3]) == 0);  // the one state it must not start in
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace

std::string unique_id(std::string_view prefix, std::size_t n) {
  static constexpr char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  thread_local id_generator generator;
  std::string out(prefix);
  out.resize(prefix.size() + n);
  // 10 characters per draw (62^10 < 2^64); the slight skew of % 62 costs nothing in uniqueness.
  for (std::size_t i = prefix.size(); i < out.size();) {
    std::uint64_t r = generator.next();
    for (int k = 0; k < 10 && i < out.size(); ++k, r /= 62) out[i++] = alphabet[r % 62];
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
