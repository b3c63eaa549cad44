// The fixture a network adapter's integration tests share: the real server hosting one connector's plugin
// ({connector}.so), a data-plane client of it, and what those tests ask of a channel (its status, its next message,
// a reply, the reason the admin list and /events show) and a restart of xconn on the same store.
#pragma once

#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/test_support.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace xconn::test {

class adapter_channel_fixture : public ::testing::Test {
 protected:
  adapter_channel_fixture(const std::string& connector, const std::function<void(config&)>& tweak)
      : connector_(connector), server({connector + ".so"}, tweak) {}

  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key(), connector_);
    ASSERT_TRUE(dp);
  }
  void TearDown() override {
    dp.reset();
    server.stop();
  }

  // Stops xconn, lets `meanwhile` happen, starts xconn again on the same store and opens the channels again.
  template <class Meanwhile>
  void restart(const std::vector<std::string>& channels, Meanwhile meanwhile) {
    auto connector_id = dp->connector_id();
    dp.reset();
    server.stop();
    meanwhile();
    server.start();
    dp = dp_client::connect(server.port(), server.key(), connector_, {{"connector_id", connector_id}});
    ASSERT_TRUE(dp);
    for (const auto& channel : channels) ASSERT_TRUE(dp->open_channel(channel));
  }
  std::string status_of(const std::string& channel) {
    auto d = dp->get_descriptor(channel);
    return d ? text_of(descriptor_in(*d)["connection"].as_object(), "status") : "";
  }
  // The next chat.message on channel, acked.
  std::optional<boost::json::object> next_message(const std::string& channel,
                                                  std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
    auto m = dp->next_push("chat.message", channel, deadline);
    if (!m) return std::nullopt;
    auto p = payload_of(*m);
    dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
    return p;
  }
  // A final's ack payload.
  boost::json::object reply(const std::string& channel, const std::string& message_id, const std::string& text) {
    auto ack = dp->request("chat.message", {{"message_id", message_id}, {"text", text}}, channel,
                           std::chrono::seconds(15));
    return ack ? payload_of(*ack) : boost::json::object{};
  }
  // The status_reason GET {base}/channels shows for channel ("" for none).
  std::string listed_reason(const std::string& channel) {
    auto v = http_get(server.port(), "/connectors/" + connector_ + "/channels", server.key()).json();
    for (const auto& ch : v.at("channels").as_array())
      if (ch.at("connector_channel_id") == boost::json::value(channel))
        return text_of(ch.as_object(), "status_reason");
    return "";
  }
  // The status_reason of the channel's last ChannelStatusChanged on /events ("" for none).
  std::string last_change_reason(const std::string& channel) {
    auto v = http_get(server.port(), "/connectors/" + connector_ + "/events?limit=1000", server.key()).json();
    std::string reason;
    for (const auto& e : v.at("events").as_array())
      if (e.at("event_type") == "ChannelStatusChanged" && e.at("session_id") == boost::json::value(channel))
        reason = text_of(e.at("payload").as_object(), "status_reason");
    return reason;
  }

  std::string connector_;
  server_fixture server;
  std::unique_ptr<dp_client> dp;
};

}  // namespace xconn::test
