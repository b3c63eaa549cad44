// Parsing configuration documents in tests: a parse that must succeed, one that must fail, and an expectation on
// the key and line an error names.
#pragma once

#include "core/base/config.hpp"

#include <gtest/gtest.h>

#include <string>

namespace xconn::test {

// A secret no error message may quote.
inline constexpr const char* planted_secret = "sk-PLANTED-SECRET-123456";

inline config parse_ok(const std::string& yaml) {
  auto result = parse_config(yaml, "test.yaml");
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().what());
  return result ? *result : config{};
}

inline config_error parse_err(const std::string& yaml) {
  auto result = parse_config(yaml, "test.yaml");
  EXPECT_FALSE(result.has_value()) << "expected an error for:\n" << yaml.substr(0, 200);
  return result ? config_error{} : result.error();
}

// Asserts the error names exactly this key and line.
#define EXPECT_CONFIG_ERROR(yaml, want_key, want_line)                          \
  do {                                                                           \
    auto err_ = parse_err(yaml);                                                 \
    EXPECT_EQ(err_.key, want_key) << err_.what();                               \
    EXPECT_EQ(err_.line, want_line) << err_.what();                             \
    EXPECT_FALSE(err_.message.empty());                                          \
  } while (0)

}  // namespace xconn::test
