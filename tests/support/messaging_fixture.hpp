// The inbound-messaging fixture: the in-process server with echo and short delivery timers (an ack is awaited
// 1 s, retries stop after 2 s), echo's /inject to emit, and /health to read the inbound counters.
#pragma once

#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <string>

namespace xconn::test {

class messaging : public ::testing::Test {
 protected:
  explicit messaging(const std::function<void(config&)>& tweak = {})
      : server({"echo.so"}, [&](config& c) {
          c.delivery.ack_timeout_s = 1;
          c.delivery.retry_max_s = 2;
          if (tweak) tweak(c);
        }) {}

  void SetUp() override { server.start(); }

  std::map<std::string, std::string> auth() const { return {{"Authorization", "Bearer " + server.key()}}; }

  // POST /connectors/echo/inject: the emit fields plus the channel.
  http_reply inject(const std::string& channel, boost::json::object emit) {
    emit["connector_channel_id"] = channel;
    return http_call(server.port(), "POST", "/connectors/echo/inject", auth(), boost::json::serialize(emit));
  }
  void inject_ok(const std::string& channel, boost::json::object emit) {
    auto r = inject(channel, std::move(emit));
    ASSERT_EQ(r.status, 202) << r.body;
  }

  boost::json::object health() {
    auto r = http_get(server.port(), "/connectors/echo/health", server.key());
    EXPECT_EQ(r.status, 200) << r.body;
    auto v = r.json();
    return v.is_object() ? v.as_object() : boost::json::object{};
  }
  std::int64_t inbound_count(const char* key) {
    auto h = health();
    auto* in = h.if_contains("inbound");
    return in && in->is_object() && in->as_object().contains(key) ? in->as_object().at(key).to_number<std::int64_t>()
                                                                  : -1;
  }
  // Polls /health until inbound.key equals want, or the deadline passes.
  bool wait_inbound(const char* key, std::int64_t want,
                    std::chrono::milliseconds deadline = std::chrono::seconds(5)) {
    return wait_until([&] { return inbound_count(key) == want; }, deadline);
  }

  void ack(dp_client& c, const std::string& channel, const boost::json::object& message, boost::json::object payload) {
    auto packet = payload_of(message);
    payload["message_id"] = packet.at("message_id");
    c.send("chat.message.ack", std::move(payload), channel);
  }
  void accept(dp_client& c, const std::string& channel, const boost::json::object& message) {
    ack(c, channel, message, {{"status", "accepted"}});
  }

  server_fixture server;
};

}  // namespace xconn::test
