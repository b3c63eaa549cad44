// The data-plane handshake on the real server with a real WebSocket client (spec §6-8.2, docs/protocol.md "Data
// plane").
#include "core/dataplane/ws_session.hpp"

#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace xconn::test {
namespace {
namespace json = boost::json;
namespace websocket = boost::beast::websocket;

class handshake : public ::testing::Test {
 protected:
  void SetUp() override { server.start(); }

  std::unique_ptr<ws_client> open(ws_client::options opts = {}) {
    if (opts.key.empty()) opts.key = server.key();
    return ws_client::connect(server.port(), "/connectors/echo/ws", opts);
  }

  // Every packet the server sends is a valid envelope, and answers echo request_id and reply_to.
  static void expect_answer(const json::object& reply, const json::object& request, const std::string& type) {
    EXPECT_EQ(schema_violations("xagent.connector.packet.v1", json::serialize(reply)), "");
    EXPECT_EQ(reply.at("type").as_string(), type);
    EXPECT_EQ(reply.at("request_id"), request.at("request_id"));
    EXPECT_EQ(reply.at("reply_to"), request.at("packet_id"));
    EXPECT_TRUE(reply.at("packet_id").as_string().starts_with("pkt_"));
    EXPECT_GT(reply.at("time").as_int64(), 0);
  }

  static std::string error_code(const json::object& reply) {
    auto* e = reply.if_contains("error");
    return e ? std::string(e->as_object().at("code").as_string()) : "";
  }

  server_fixture server;
};

TEST_F(handshake, key_is_checked_before_the_upgrade) {
  int status = 0;
  EXPECT_EQ(ws_client::connect(server.port(), "/connectors/echo/ws", {"", "xagent.connector.packet.v1"}, &status),
            nullptr);
  EXPECT_EQ(status, 401);
  EXPECT_EQ(ws_client::connect(server.port(), "/connectors/echo/ws", {"xck_wrong_0123456789abcdef", "xagent.connector.packet.v1"},
                               &status),
            nullptr);
  EXPECT_EQ(status, 401);
  EXPECT_EQ(ws_client::connect(server.port(), "/connectors/nope/ws", {server.key(), "xagent.connector.packet.v1"}, &status),
            nullptr);
  EXPECT_EQ(status, 404);
}

TEST_F(handshake, subprotocol_is_selected_or_the_offer_refused) {
  auto c = open();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->selected_subprotocol(), "xagent.connector.packet.v1");
  int status = 0;
  EXPECT_EQ(ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "chat, superchat"}, &status), nullptr);
  EXPECT_EQ(status, 400);
  auto listed = ws_client::connect(server.port(), "/connectors/echo/ws",
                                   {server.key(), "other, xagent.connector.packet.v1"});
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->selected_subprotocol(), "xagent.connector.packet.v1");
  auto none = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), ""});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->selected_subprotocol(), "");
}

TEST_F(handshake, hello_issues_a_connector_id_and_reuses_it) {
  auto c = open();
  ASSERT_TRUE(c);
  auto request = make_packet("connector.hello", {{"connector_card_id", "im.echo"},
                                                 {"protocol_version", "3.0"},
                                                 {"supported_profiles", json::array{"xagent.im.v2"}}});
  c->send_json(request);
  auto ack = c->receive_json();
  ASSERT_TRUE(ack);
  expect_answer(*ack, request, "connector.hello.ack");
  auto payload = ack->at("payload").as_object();
  EXPECT_EQ(payload["connector_card_id"], "im.echo");
  EXPECT_EQ(payload["protocol_version"], "3.0");
  std::string id(payload["connector_id"].as_string());
  EXPECT_TRUE(id.starts_with("conn_"));

  // A second socket presenting the id reuses it, while the first is still open.
  auto second = open();
  auto again = second->hello({{"connector_id", id}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->at("payload").as_object().at("connector_id").as_string(), id);

  // An unknown id gets a new one.
  auto third = open();
  auto fresh = third->hello({{"connector_id", "conn_never_issued"}});
  ASSERT_TRUE(fresh);
  EXPECT_NE(fresh->at("payload").as_object().at("connector_id").as_string(), id);
  EXPECT_NE(fresh->at("payload").as_object().at("connector_id"), "conn_never_issued");

  // It survives a restart of the server.
  c.reset();
  second.reset();
  third.reset();
  server.stop();
  server.start();
  auto after = open();
  auto restored = after->hello({{"connector_id", id}});
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->at("payload").as_object().at("connector_id").as_string(), id);
}

TEST_F(handshake, a_higher_version_is_answered_with_3_0) {
  for (const char* v : {"3.1", "4", "3.0.7", "10.2"}) {
    auto c = open();
    auto ack = c->hello({{"protocol_version", v}});
    ASSERT_TRUE(ack) << v;
    EXPECT_EQ(ack->at("type"), "connector.hello.ack") << v;
    EXPECT_EQ(ack->at("payload").as_object().at("protocol_version"), "3.0");
  }
}

struct rejected_hello {
  const char* name;
  json::object overrides;
  bool remove_version;
  bool remove_profiles;
  const char* code;
};

TEST_F(handshake, every_hello_rejection_has_its_code_and_closes_with_1008) {
  std::vector<rejected_hello> cases = {
      {"missing version", {}, true, false, "protocol_version_unsupported"},
      {"malformed version", {{"protocol_version", "three"}}, false, false, "protocol_version_unsupported"},
      {"numeric version", {{"protocol_version", 3.0}}, false, false, "protocol_version_unsupported"},
      {"old version", {{"protocol_version", "2.9"}}, false, false, "protocol_version_unsupported"},
      {"empty version", {{"protocol_version", ""}}, false, false, "protocol_version_unsupported"},
      {"signed version", {{"protocol_version", "+3.0"}}, false, false, "protocol_version_unsupported"},
      {"missing profiles", {}, false, true, "invalid_packet"},
      {"card mismatch", {{"connector_card_id", "im.other"}}, false, false, "connector_card_id_mismatch"},
      {"no common profile", {{"supported_profiles", json::array{"xagent.device.v1"}}}, false, false,
       "profile_not_supported"},
  };
  for (auto& tc : cases) {
    auto c = open();
    ASSERT_TRUE(c) << tc.name;
    json::object payload{{"connector_card_id", "im.echo"},
                         {"protocol_version", "3.0"},
                         {"supported_profiles", json::array{"xagent.im.v2"}}};
    if (tc.remove_version) payload.erase("protocol_version");
    if (tc.remove_profiles) payload.erase("supported_profiles");
    for (const auto& kv : tc.overrides) payload[kv.key()] = kv.value();
    auto request = make_packet("connector.hello", payload);
    c->send_json(request);
    auto reply = c->receive_json();
    ASSERT_TRUE(reply) << tc.name;
    expect_answer(*reply, request, "error");
    EXPECT_EQ(error_code(*reply), tc.code) << tc.name;
    EXPECT_EQ(c->wait_closed(), static_cast<int>(websocket::close_code::policy_error)) << tc.name;
  }
}

TEST_F(handshake, only_ping_is_answered_before_hello) {
  auto c = open();
  auto ping = make_packet("ping");
  c->send_json(ping);
  auto pong = c->receive_json();
  ASSERT_TRUE(pong);
  expect_answer(*pong, ping, "pong");

  for (const char* type : {"channel.open", "tool.invoke", "session.sync_request", "whatever"}) {
    auto request = make_packet(type, {}, "cch_x");
    c->send_json(request);
    auto reply = c->receive_json();
    ASSERT_TRUE(reply) << type;
    expect_answer(*reply, request, "error");
    EXPECT_EQ(error_code(*reply), "hello_required") << type;
  }
  ASSERT_TRUE(c->hello());
}

// An error from xAgent is logged, never answered (spec §8.23), before the hello and after it: the next frame the
// client reads is the pong of its following ping.
TEST_F(handshake, an_incoming_error_packet_is_not_answered) {
  auto c = open();
  auto error_packet = [] {
    auto e = make_packet("error", {}, "cch_x");
    e.erase("payload");
    e["reply_to"] = "pkt_earlier";
    e["error"] = json::object{{"code", "channel_not_open"}, {"message", "from xAgent"}};
    return e;
  };
  for (bool after_hello : {false, true}) {
    if (after_hello) {
      ASSERT_TRUE(c->hello());
    }
    c->send_json(error_packet());
    auto ping = make_packet("ping");
    c->send_json(ping);
    auto next = c->receive_json();
    ASSERT_TRUE(next);
    expect_answer(*next, ping, "pong");
  }
}

TEST_F(handshake, after_hello_unknown_types_are_unsupported_and_a_second_hello_is_invalid) {
  auto c = open();
  ASSERT_TRUE(c->hello());
  for (const char* type : {"session.sync_request", "history.get", "nope"}) {
    auto request = make_packet(type, {}, "cch_x");
    c->send_json(request);
    auto reply = c->receive_json();
    ASSERT_TRUE(reply);
    expect_answer(*reply, request, "error");
    EXPECT_EQ(error_code(*reply), "unsupported_packet") << type;
  }
  auto again = make_packet("connector.hello", {{"connector_card_id", "im.echo"},
                                               {"protocol_version", "3.0"},
                                               {"supported_profiles", json::array{"xagent.im.v2"}}});
  c->send_json(again);
  auto reply = c->receive_json();
  ASSERT_TRUE(reply);
  EXPECT_EQ(error_code(*reply), "invalid_packet");
  auto ping = make_packet("ping");
  c->send_json(ping);
  auto pong = c->receive_json();
  ASSERT_TRUE(pong);
  expect_answer(*pong, ping, "pong");
}

TEST_F(handshake, malformed_packets_get_invalid_packet_and_the_socket_stays_usable) {
  auto c = open();
  std::vector<std::string> bad = {
      "not json",
      "[1,2,3]",
      "{}",
      R"({"schema":"xagent.connector.packet/v1","packet_id":"p1","request_id":"r1"})",
      R"({"schema":"other/v1","packet_id":"p2","request_id":"r2","type":"ping"})",
      R"({"schema":"xagent.connector.packet/v1","packet_id":"","request_id":"r3","type":"ping"})",
      R"({"schema":"xagent.connector.packet/v1","packet_id":"p4","request_id":"r4","type":"ping","payload":[]})",
      R"({"schema":"xagent.connector.packet/v1","packet_id":"p5","request_id":"r5","type":7})",
      std::string(R"({"schema":"xagent.connector.packet/v1","packet_id":"p6","type":"ping","payload":)") +
          std::string(500, '[') + std::string(500, ']') + "}",
      R"({"schema":"xagent.connector.packet/v1","packet_id":"p7","type":"ping","time":-5})",
      R"({"schema":"xagent.connector.packet/v1","packet_id":"p8","type":"ping","type":"ping"})",
  };
  for (const auto& frame : bad) {
    c->send(frame);
    auto reply = c->receive_json();
    ASSERT_TRUE(reply) << frame.substr(0, 60);
    EXPECT_EQ(reply->at("type"), "error");
    EXPECT_EQ(error_code(*reply), "invalid_packet") << frame.substr(0, 60);
    EXPECT_EQ(schema_violations("xagent.connector.packet.v1", json::serialize(*reply)), "");
  }
  // Ids are echoed when they could be read.
  c->send(R"({"schema":"other/v1","packet_id":"p9","request_id":"r9","type":"ping"})");
  auto reply = c->receive_json();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->at("request_id"), "r9");
  EXPECT_EQ(reply->at("reply_to"), "p9");
  ASSERT_TRUE(c->hello());
}

TEST_F(handshake, a_text_frame_that_is_not_utf8_fails_the_socket_with_1007) {
  // RFC 6455 §8.1: invalid UTF-8 in a text message fails the WebSocket connection.
  auto c = open();
  c->send("{\"schema\":\"xagent.connector.packet/v1\",\"packet_id\":\"p7\",\"type\":\"\xff\xfe\"}");
  EXPECT_EQ(c->wait_closed(), static_cast<int>(websocket::close_code::bad_payload));
}

TEST_F(handshake, binary_frames_are_invalid_packets) {
  auto c = open();
  ASSERT_TRUE(c->send_binary(boost::json::serialize(make_packet("ping"))));
  auto reply = c->receive_json();
  ASSERT_TRUE(reply);
  EXPECT_EQ(error_code(*reply), "invalid_packet");
}

TEST_F(handshake, many_sockets_hello_at_once) {
  std::vector<std::unique_ptr<ws_client>> clients;
  for (int i = 0; i < 20; ++i) {
    clients.push_back(open());
    ASSERT_TRUE(clients.back());
    clients.back()->send_json(make_packet("connector.hello", {{"connector_card_id", "im.echo"},
                                                              {"protocol_version", "3.0"},
                                                              {"supported_profiles", json::array{"xagent.im.v2"}}}));
  }
  for (auto& c : clients) {
    auto ack = c->receive_json();
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->at("type"), "connector.hello.ack");
  }
}

class handshake_limits : public handshake {};

TEST(handshake_frames, a_frame_over_max_frame_bytes_closes_with_1009) {
  server_fixture server({"echo.so"}, [](config& c) { c.server.max_frame_bytes = 4096; });
  server.start();
  auto c = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "xagent.connector.packet.v1"});
  ASSERT_TRUE(c);
  auto ping = make_packet("ping");
  ping["payload"] = json::object{{"pad", std::string(3000, 'a')}};
  c->send_json(ping);
  ASSERT_TRUE(c->receive_json());
  ping["payload"] = json::object{{"pad", std::string(5000, 'a')}};
  c->send_json(ping);
  EXPECT_EQ(c->wait_closed(), static_cast<int>(websocket::close_code::too_big));
}

TEST(handshake_heartbeat, a_silent_socket_is_dropped_and_a_live_one_kept) {
  server_fixture server({"echo.so"}, [](config& c) { c.server.heartbeat_s = 1; });
  server.start();
  auto live = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "xagent.connector.packet.v1"});
  auto silent = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "xagent.connector.packet.v1"});
  ASSERT_TRUE(live && silent);
  // The silent client never reads, so it never answers the server's pings.
  auto start = std::chrono::steady_clock::now();
  bool dropped = false;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(8) && !dropped) {
    // The live client reads (answering pings) with a ping of its own now and then.
    live->send_json(make_packet("ping"));
    ASSERT_TRUE(live->receive_json(std::chrono::seconds(2)));
    dropped = silent->drain_raw_until_closed();
    if (dropped) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(dropped);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  live->send_json(make_packet("ping"));
  EXPECT_TRUE(live->receive_json());
}

// A socket that never says connector.hello is closed with 1008 once server.hello_timeout_s has passed, however well
// it answers pings; one that said hello in time stays.
TEST(handshake_hello_deadline, a_socket_without_hello_is_closed_with_1008_and_one_with_hello_stays) {
  server_fixture server({"echo.so"}, [](config& c) { c.server.hello_timeout_s = 1; });
  server.start();
  auto greeted = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "xagent.connector.packet.v1"});
  auto silent = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "xagent.connector.packet.v1"});
  ASSERT_TRUE(greeted && silent);
  ASSERT_TRUE(greeted->hello());
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(silent->wait_closed(), static_cast<int>(websocket::close_code::policy_error));  // reads: pongs go back
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500));
  greeted->send_json(make_packet("ping"));
  EXPECT_TRUE(greeted->receive_json()) << "the socket that said hello is still served";
}

TEST(handshake_shutdown, stopping_the_server_closes_sockets_with_1001) {
  server_fixture server;
  server.start();
  auto c = ws_client::connect(server.port(), "/connectors/echo/ws", {server.key(), "xagent.connector.packet.v1"});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->hello());
  std::thread stopper([&] { server.stop(); });
  EXPECT_EQ(c->wait_closed(), static_cast<int>(websocket::close_code::going_away));
  stopper.join();
}

// A peer that said hello and then never reads never answers the server's close: stop() drops it after its grace and
// the session ends inside stop(), while the lease service it reports its close to still exists (under ASan, a
// session that outlived stop() touched that service after it was freed).
TEST(handshake_shutdown, a_peer_that_never_answers_the_close_is_dropped_within_stop) {
  std::optional<server_fixture> server(std::in_place);
  server->start();
  auto c = ws_client::connect(server->port(), "/connectors/echo/ws", {server->key(), "xagent.connector.packet.v1"});
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->hello());
  auto started = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8));
  server.reset();
  EXPECT_TRUE(c->drain_raw_until_closed()) << "the connection was dropped";
}

}  // namespace
}  // namespace xconn::test
