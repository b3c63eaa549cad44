// A misbehaving plugin (tests/plugins/fixtures/faulty.cpp) on the real server: its faults reach xAgent as the
// protocol's errors, the socket stays usable, a hang shows in /health, and a leaked secret is withheld.
#include "core/base/log.hpp"

#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;

class faults : public ::testing::Test {
 protected:
  void SetUp() override {
    log::init(spdlog::level::debug, log_file.string());
    server.start();
    ws = ws_client::connect(server.port(), "/connectors/faulty/ws", {server.key()});
    ASSERT_TRUE(ws);
    auto hello = ws->hello({{"connector_card_id", "im.faulty"}});
    ASSERT_TRUE(hello);
    ASSERT_EQ(hello->at("type"), "connector.hello.ack");
    auto opened = request(make_packet("channel.open"));
    channel = std::string(opened.at("connector_channel_id").as_string());
  }
  void TearDown() override {
    ws.reset();
    server.stop();
    log::init();
  }

  // Sends packet and returns the answer to it, or an empty object at the deadline. Pushes that arrive
  // meanwhile are kept in `pushes`.
  json::object request(const json::object& packet) {
    ws->send_json(packet);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      auto reply = ws->receive_json();
      if (!reply) break;
      if (reply->contains("reply_to") && reply->at("reply_to") == packet.at("packet_id")) return *reply;
      pushes.push_back(std::move(*reply));
    }
    ADD_FAILURE() << "no answer to " << packet.at("type");
    return {};
  }

  json::object sign_in(const std::string& token) {
    return request(make_packet("auth.start", {{"flow_id", "faulty_token"}, {"input", {{"token", token}}}}, channel));
  }

  json::object invoke(const std::string& tool) {
    return request(make_packet("tool.invoke", {{"tool_id", tool}, {"arguments", json::object{}}}, channel));
  }

  static std::string error_code(const json::object& reply) {
    auto* e = reply.if_contains("error");
    return e ? std::string(e->as_object().at("code").as_string()) : "";
  }

  std::string log_text() {
    spdlog::default_logger()->flush();
    return read_file(log_file);
  }

  temp_dir log_dir;
  std::filesystem::path log_file = log_dir.path() / "xconn.log";
  server_fixture server{{"faulty.so"}};
  std::unique_ptr<ws_client> ws;
  std::string channel;
  std::vector<json::object> pushes;
};

TEST_F(faults, a_throwing_tool_answers_tool_invoke_failed_and_its_text_stays_in_the_log) {
  ASSERT_EQ(sign_in("good-token-123").at("payload").as_object().at("status"), "authenticated");
  auto ack = invoke("faulty_throw");
  EXPECT_EQ(ack.at("type"), "tool.invoke.ack");
  EXPECT_EQ(error_code(ack), "tool_invoke_failed");
  EXPECT_EQ(json::serialize(ack).find("on purpose"), std::string::npos);
  EXPECT_NE(log_text().find("faulty_throw threw on purpose"), std::string::npos);
  EXPECT_EQ(invoke("faulty_not_object").at("error").as_object().at("code"), "tool_invoke_failed");
}

TEST_F(faults, a_hanging_tool_times_out_the_socket_stays_usable_and_health_degrades) {
  ASSERT_EQ(sign_in("good-token-123").at("payload").as_object().at("status"), "authenticated");
  auto ack = invoke("faulty_hang");  // the plugin's own limit: 300 ms
  EXPECT_EQ(ack.at("type"), "tool.invoke.ack");
  EXPECT_EQ(error_code(ack), "tool_timeout");
  auto pong = request(make_packet("ping"));
  EXPECT_EQ(pong.at("type"), "pong");
  auto health = http_get(server.port(), "/connectors/faulty/health", server.key()).json().as_object();
  EXPECT_EQ(health.at("status"), "degraded");
  EXPECT_EQ(health.at("adapter").as_object().at("health"), "degraded");
  EXPECT_EQ(health.at("adapter").as_object().at("last_error_code"), "tool_timeout");
  EXPECT_EQ(health.at("channels").as_object().at("authenticated"), 1);
  // The health change was pushed as a descriptor of the routed, signed-in channel.
  bool pushed = false;
  for (const auto& p : pushes)
    pushed = pushed || (p.at("type") == "connection.descriptor.push" &&
                        p.at("payload").at("connection_descriptor").at("connection").at("status") == "degraded");
  EXPECT_TRUE(pushed);

  // A call answered in time makes it healthy again. Each change is an AdapterFault event, and the channel's status
  // follows it (ChannelStatusChanged, reason plugin_health).
  invoke("faulty_not_object");
  std::vector<std::string> faults, changes;
  ASSERT_TRUE(wait_until([&] {
    faults.clear();
    changes.clear();
    auto page = http_get(server.port(), "/connectors/faulty/events?limit=1000", server.key()).json();
    for (const auto& e : page.at("events").as_array()) {
      const auto& p = e.at("payload").as_object();
      if (e.at("event_type") == "AdapterFault")
        faults.push_back(std::string(p.at("health").as_string()) + "/" +
                         (p.contains("last_error_code") ? std::string(p.at("last_error_code").as_string()) : ""));
      if (e.at("event_type") == "ChannelStatusChanged" && p.at("reason") == "plugin_health")
        changes.push_back(std::string(p.at("previous_status").as_string()) + "->" + std::string(p.at("status").as_string()));
    }
    return faults.size() >= 2 && changes.size() >= 2;
  }));
  EXPECT_EQ(faults.front(), "degraded/tool_timeout");
  EXPECT_EQ(faults.back().substr(0, 8), "healthy/");
  EXPECT_EQ(changes, (std::vector<std::string>{"connected->degraded", "degraded->connected"}));
}

TEST_F(faults, an_auth_answer_that_repeats_the_secret_is_withheld) {
  const std::string secret = "leak-S3CRET-planted-0042";
  auto ack = sign_in(secret);
  EXPECT_EQ(ack.at("type"), "auth.start.ack");
  EXPECT_EQ(ack.at("payload").as_object().at("status"), "failed");
  EXPECT_EQ(error_code(ack), "invalid_plugin_result");
  EXPECT_EQ(json::serialize(ack).find(secret), std::string::npos);
  EXPECT_EQ(log_text().find(secret), std::string::npos);
  // Not signed in: tools stay closed.
  EXPECT_EQ(error_code(invoke("faulty_throw")), "connection_not_authenticated");
}

}  // namespace
}  // namespace xconn::test
