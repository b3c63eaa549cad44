// How configuration errors read, load_config on files that are missing, too big or bad, and hostile documents
// that must each fail fast and cleanly.
#include "core/base/config.hpp"

#include "support/config_parsing.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace xconn::test {
namespace {

TEST(Config, ErrorFormat) {
  EXPECT_EQ((config_error{"a.b", 3, "bad", "f.yaml"}).what(), "f.yaml:3: a.b: bad");
  EXPECT_EQ((config_error{"a.b", 0, "bad", "f.yaml"}).what(), "f.yaml: a.b: bad");
  EXPECT_EQ((config_error{"", 3, "bad", "f.yaml"}).what(), "f.yaml:3: bad");
  EXPECT_EQ((config_error{"", 0, "bad", "f.yaml"}).what(), "f.yaml: bad");
  auto err = parse_err("server:\n  bogus: 1\n");
  EXPECT_EQ(err.file, "test.yaml");
  EXPECT_EQ(err.what(), "test.yaml:2: server.bogus: unknown key");
}

TEST(Config, ValueThrowsRuntimeError) {
  auto result = parse_config("bogus: 1\n");
  EXPECT_THROW((void)result.value(), std::runtime_error);
}

TEST(Config, LoadConfigFileErrors) {
  test::temp_dir dir;
  auto missing = (dir.path() / "missing.yaml").string();
  auto r1 = load_config(missing);
  ASSERT_FALSE(r1.has_value());
  EXPECT_EQ(r1.error().key, "");
  EXPECT_EQ(r1.error().line, 0);
  EXPECT_EQ(r1.error().file, missing);
  EXPECT_FALSE(r1.error().message.empty());

  EXPECT_FALSE(load_config(dir.str()).has_value());

  auto big = dir.path() / "big.yaml";
  test::write_file(big, std::string(2 * 1024 * 1024, '#'));
  auto r2 = load_config(big.string());
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().line, 0);

  auto good = dir.path() / "good.yaml";
  test::write_file(good, "server:\n  io_threads: 3\n");
  auto r3 = load_config(good.string());
  ASSERT_TRUE(r3.has_value());
  EXPECT_EQ(r3->server.io_threads, 3);
  EXPECT_EQ(r3->source_path, good.string());

  auto bad = dir.path() / "bad.yaml";
  test::write_file(bad, "server:\n  nope: 1\n");
  auto r4 = load_config(bad.string());
  ASSERT_FALSE(r4.has_value());
  EXPECT_EQ(r4.error().what(), bad.string() + ":2: server.nope: unknown key");
}

// --- hostile input: each must fail fast and cleanly ---

TEST(ConfigHostile, BillionLaughs) {
  std::string doc = "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (int i = 1; i < 10; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    doc += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) {
      if (k) doc += ',';
      doc += prev;
    }
    doc += "]\n";
  }
  auto start = std::chrono::steady_clock::now();
  auto err = parse_err(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(err.line, 1);
  // Inside a connector group, where any shape is allowed, it is refused just the same.
  EXPECT_FALSE(parse_config("connectors:\n  echo:\n    config:\n      a: &x [1]\n      b: *x\n").has_value());
  EXPECT_FALSE(parse_config("server:\n  io_threads: &n 1\n").has_value());
  EXPECT_FALSE(parse_config("server:\n  io_threads: *n\n").has_value());
  EXPECT_FALSE(parse_config("store: &s {}\n").has_value());
}

TEST(ConfigHostile, OversizedDocument) {
  std::string doc = "server: {}\n" + std::string(2 * 1024 * 1024, '#');
  auto err = parse_err(doc);
  EXPECT_EQ(err.line, 0);
  EXPECT_EQ(err.key, "");
  // Just under the limit is fine.
  parse_ok("# " + std::string(1024 * 1024 - 10, 'x') + "\n");
}

TEST(ConfigHostile, HugeScalar) {
  auto err = parse_err("store:\n  path: \"" + std::string(100 * 1024, 'x') + "\"\n");
  EXPECT_EQ(err.line, 2);
  EXPECT_FALSE(parse_config("connectors:\n  echo:\n    config:\n      " + std::string(100 * 1024, 'k') + ": 1\n").has_value());
  ::setenv("XCONN_TEST_BIG", std::string(40 * 1024, 'y').c_str(), 1);
  EXPECT_CONFIG_ERROR("store:\n  path: ${XCONN_TEST_BIG}${XCONN_TEST_BIG}\n", "store.path", 2);
}

TEST(ConfigHostile, DeepNesting) {
  std::string flow = "connectors:\n  echo:\n    config:\n      deep: " + std::string(100, '[') + std::string(100, ']') + "\n";
  EXPECT_FALSE(parse_config(flow).has_value());
  std::string block = "connectors:\n  echo:\n    config:\n";
  for (int i = 0; i < 100; ++i) block += std::string(6 + 2 * i, ' ') + "k" + std::to_string(i) + ":\n";
  EXPECT_FALSE(parse_config(block).has_value());
  // Far past yaml-cpp's own recursion guard: still an error, not a crash.
  EXPECT_FALSE(parse_config(std::string(100000, '[')).has_value());
  EXPECT_FALSE(parse_config(std::string(100000, '{')).has_value());
  // 32 levels in all are allowed: top map, connectors, echo, config + 28 more.
  std::string ok = "connectors:\n  echo:\n    config:\n      deep: " + std::string(28, '[') + std::string(28, ']') + "\n";
  parse_ok(ok);
}

TEST(ConfigHostile, TooManyNodes) {
  std::string doc = "connectors:\n  echo:\n    config:\n      many: [";
  for (int i = 0; i < 150000; ++i) doc += i ? ",0" : "0";
  doc += "]\n";
  auto err = parse_err(doc);
  EXPECT_EQ(err.line, 4);
}

TEST(ConfigHostile, MultipleDocuments) {
  EXPECT_CONFIG_ERROR("server: {}\n---\nstore: {}\n", "", 2);  // the second "---"
  EXPECT_CONFIG_ERROR("---\nserver: {}\n...\n---\n", "", 4);
}

TEST(ConfigHostile, TopLevelNotAMap) {
  EXPECT_CONFIG_ERROR("- a\n- b\n", "", 1);
  EXPECT_CONFIG_ERROR("just a string\n", "", 1);
  EXPECT_CONFIG_ERROR("\n42\n", "", 2);
  EXPECT_CONFIG_ERROR("? [a]\n: b\n", "", 1);  // a key that is not a string
}

TEST(ConfigHostile, BinaryGarbage) {
  EXPECT_CONFIG_ERROR(std::string("server:\n  listen: \"a\0b\"\n", 22), "", 2);
  EXPECT_CONFIG_ERROR("server:\n  listen: \"\xff\xfe\"\n", "", 2);
  EXPECT_CONFIG_ERROR("a: \xc0\xaf\n", "", 1);       // overlong '/'
  EXPECT_CONFIG_ERROR("a: \xed\xa0\x80\n", "", 1);   // surrogate
  EXPECT_CONFIG_ERROR("a: \xe2\x82\n", "", 1);       // truncated
  EXPECT_CONFIG_ERROR("a: \x1b[31m\n", "", 1);       // escape sequence
  parse_ok("connectors:\n  echo:\n    config:\n      text: \"h\xc3\xa9llo \xf0\x9f\x98\x80\"\n");
  // Random bytes: always an error or a value, quickly, never a crash.
  std::mt19937 rng(42);
  for (int round = 0; round < 300; ++round) {
    std::string doc(1 + rng() % 512, '\0');
    for (auto& c : doc) c = static_cast<char>(rng());
    (void)parse_config(doc);
    for (auto& c : doc) c = " \n\t:-[]{}\"'&*!|>#%@,?~abc0123"[rng() % 30];
    (void)parse_config(doc);
  }
}

TEST(ConfigHostile, Tabs) {
  EXPECT_CONFIG_ERROR("server:\n\tio_threads: 4\n", "", 2);
  // A tab inside a quoted value is just a character.
  EXPECT_EQ(parse_ok("store:\n  path: \"a\tb\"\n").store.path, "a\tb");
}

}  // namespace
}  // namespace xconn::test
