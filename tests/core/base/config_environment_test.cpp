// ${VAR} expansion in configuration documents, its errors, and secrets (from the document or the environment)
// never quoted by an error.
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

TEST(Config, EnvironmentExpansion) {
  ::setenv("XCONN_TEST_PORT", "9000", 1);
  ::setenv("XCONN_TEST_KEY", "0123456789abcdef-from-env", 1);
  ::setenv("XCONN_TEST_HB", "4", 1);
  config c = parse_ok(R"(server:
  listen: "127.0.0.1:${XCONN_TEST_PORT}"
  api_keys: ["${XCONN_TEST_KEY}"]
  heartbeat_s: ${XCONN_TEST_HB}5
  max_frame_bytes: "${XCONN_TEST_PORT}"
store:
  path: /a/${XCONN_TEST_PORT}/$${XCONN_TEST_PORT}/${XCONN_TEST_PORT}
connectors:
  echo:
    config:
      port: ${XCONN_TEST_PORT}
      quoted: "${XCONN_TEST_PORT}"
)");
  EXPECT_EQ(c.server.listen, "127.0.0.1:9000");
  EXPECT_EQ(c.server.api_keys, (std::vector<std::string>{"0123456789abcdef-from-env"}));
  EXPECT_EQ(c.server.heartbeat_s, 45);
  EXPECT_EQ(c.server.max_frame_bytes, 9000u);
  EXPECT_EQ(c.store.path, "/a/9000/$9000/9000");
  EXPECT_EQ(c.connectors.at("echo").config.at("port"), 9000);  // plain: typed after expansion
  EXPECT_EQ(c.connectors.at("echo").config.at("quoted"), "9000");
}

TEST(Config, EnvironmentExpansionErrors) {
  ::setenv("XCONN_TEST_PORT", "9000", 1);
  // 90000 is out of range for heartbeat_s: the expanded value is range checked.
  EXPECT_CONFIG_ERROR("server:\n  heartbeat_s: ${XCONN_TEST_PORT}0\n", "server.heartbeat_s", 2);
  ::unsetenv("XCONN_TEST_UNSET_VAR");
  auto err = parse_err("store:\n  path: \"${XCONN_TEST_UNSET_VAR}/x\"\n");
  EXPECT_EQ(err.key, "store.path");
  EXPECT_EQ(err.line, 2);
  EXPECT_EQ(err.message, "environment variable XCONN_TEST_UNSET_VAR is not set");
  EXPECT_CONFIG_ERROR("connectors:\n  echo:\n    auth:\n      token: ${XCONN_TEST_UNSET_VAR}\n",
                      "connectors.echo.auth.token", 4);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${XCONN_TEST_PORT\"\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${1BAD}\"\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${}\"\n", "store.path", 2);
  EXPECT_CONFIG_ERROR("store:\n  path: \"${A-B}\"\n", "store.path", 2);
}

TEST(Config, SecretsNeverAppearInErrors) {
  const std::string s = planted_secret;
  ::setenv("XCONN_TEST_SECRET", planted_secret, 1);
  ::unsetenv("XCONN_TEST_UNSET_VAR");
  const std::vector<std::string> docs = {
      "server:\n  io_threads: " + s + "\n",
      "server:\n  heartbeat_s: \"" + s + "\"\n",
      "server:\n  api_keys: " + s + "\n",
      "server:\n  api_keys: {" + s + ": 1}\n",
      "server:\n  api_keys: [\"sk-PLANTED\"]\n",
      "server:\n  api_keys: [\"" + s + " x\"]\n",
      "server:\n  listen: " + s + "\n",
      "server:\n  public_base_url: " + s + "\n",
      "plugins:\n  allow: [" + s + "]\n",
      "plugins:\n  watch: " + s + "\n",
      "server:\n  io_threads: ${XCONN_TEST_SECRET}\n",
      "store:\n  path: " + s + "${XCONN_TEST_UNSET_VAR}\n",
      "store:\n  path: \"" + s + "${XCONN_TEST_SECRET\"\n",
      "connectors:\n  echo:\n    auth:\n      token: " + s + "${XCONN_TEST_UNSET_VAR}\n",
      "server:\n  api_keys: [\"" + s + "\\q\"]\n",   // parser error inside the secret's scalar
      "server:\n  api_keys: [\"" + s + "\\x\"]\n",
      "server:\n  api_keys: [\"" + s + "\n",       // unterminated
      "server: \"" + s + "\"\n",
      s + "\n",
  };
  for (const auto& doc : docs) {
    auto err = parse_err(doc);
    EXPECT_EQ(err.what().find("PLANTED"), std::string::npos) << err.what();
    EXPECT_EQ(err.what().find("SECRET-123456"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace xconn::test
