// The real server with the fixture relay and one channel signed in with its token flow, on one data-plane socket.
#pragma once

#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace xconn::test {

class relay_channel_test : public ::testing::Test {
 protected:
  explicit relay_channel_test(const std::function<void(config&)>& tweak = {}) : server{{"relay.so"}, tweak} {}

  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), "relay");
    ASSERT_TRUE(dp);
    channel = dp->open_signed_in("relay_token", {{"token", "tok-relay-1"}});
    ASSERT_FALSE(channel.empty());
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  server_fixture server;
  std::unique_ptr<dp_client> dp;
  std::string channel;
};

}  // namespace xconn::test
