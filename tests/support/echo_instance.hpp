// Fixtures that load a plugin instance through the C ABI: one whose stuck calls fail after 5 s, and a started echo.
#pragma once

#include "support/abi_test_host.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace xconn::test {

// A stuck call fails these tests after 5 s, as it always did, not after the host's default 10 s.
class plugin_instance_test : public plugin_test {
 protected:
  plugin_instance_test() : plugin_test(std::chrono::seconds(5)) {}
};

class EchoInstance : public plugin_instance_test {
 protected:
  void SetUp() override {
    load(plugin_dir() / "echo.so", R"({"config":{"sent_log_max":10}})");
    test_call& start = start_call();
    ASSERT_TRUE(host_.wait(start));
    ASSERT_EQ(start.status, XCONN_STATUS_OK) << start.json;
  }
};

}  // namespace xconn::test
