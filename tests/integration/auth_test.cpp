// Auth flows on the real server with echo's echo_token and echo_qr_login (spec §8.7-8.14;
// docs/protocol.md "Auth flows"; docs/plugin-contract.md "The reference plugin echo").

#include "support/data_plane.hpp"
#include "support/log_capture.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include "plugins/echo/sha256_hex.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::vector<std::string> both_profiles{"xagent.im.v1", "xagent.im.v2"};

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class auth_flow : public ::testing::Test {
 protected:
  void SetUp() override {
    server.start();
    c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    channel = c->open();
    ASSERT_FALSE(channel.empty());
  }

  expected_descriptor signed_out() const {
    return signed_out_descriptor(channel, c->connector_id(), both_profiles);
  }
  expected_descriptor signed_in(const std::string& hint = good_token_hint) const {
    return signed_in_descriptor(channel, c->connector_id(), both_profiles, hint);
  }
  std::string current_status() {
    auto get = c->get_descriptor(channel);
    if (!get) return "no answer";
    return text_of(descriptor_in(*get)["connection"].as_object(), "status");
  }
  // An auth.* ack that failed as a business outcome: the ack type, payload status failed, the envelope code.
  void expect_failed(const std::optional<json::object>& ack, const std::string& code, const std::string& why) {
    ASSERT_TRUE(ack) << why;
    EXPECT_EQ(ack->at("type"), "auth.start.ack") << why;
    auto p = payload_of(*ack);
    EXPECT_EQ(text_of(p, "status"), "failed") << why;
    EXPECT_EQ(text_of(p, "connector_channel_id"), channel) << why;
    EXPECT_FALSE(p.contains("connection_descriptor")) << why;
    EXPECT_EQ(error_code(*ack), code) << why;
  }
  std::optional<json::object> qr_start() { return c->auth_start(channel, "echo_qr_login", std::nullopt); }
  std::optional<json::object> qr_status(const std::string& session, bool refresh = false) {
    json::object payload{{"flow_id", "echo_qr_login"}, {"auth_session_id", session}};
    if (refresh) payload["refresh"] = true;
    return c->request("auth.status", std::move(payload), channel);
  }

  server_fixture server;
  std::unique_ptr<dp_client> c;
  std::string channel;
};

TEST_F(auth_flow, echo_token_authenticates_and_the_descriptor_is_connected) {
  auto ack = c->authenticate(channel);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->at("type"), "auth.start.ack");
  EXPECT_EQ(error_code(*ack), "");
  auto p = payload_of(*ack);
  EXPECT_EQ(text_of(p, "connector_channel_id"), channel);
  EXPECT_EQ(text_of(p, "flow_id"), "echo_token");
  EXPECT_TRUE(is_random_id(text_of(p, "auth_session_id"), "auth_")) << p;
  EXPECT_EQ(text_of(p, "status"), "authenticated");
  expect_descriptor(p["connection_descriptor"], signed_in(), c->card(), "auth.start.ack");

  auto get = c->get_descriptor(channel);
  ASSERT_TRUE(get);
  EXPECT_EQ(get->at("type"), "connection.descriptor.get.ack");
  expect_descriptor(payload_of(*get)["connection_descriptor"], signed_in(), c->card(), "descriptor.get");

  // Another token is another account: the hint follows the token (the same token, the same hint).
  auto hint_of = [&](const std::string& token) {
    auto a = c->authenticate(c->open(), token);
    return a ? text_of(descriptor_in(*a)["target"].as_object(), "account_hint") : std::string();
  };
  auto first = text_of(descriptor_in(*ack)["target"].as_object(), "account_hint");
  EXPECT_EQ(hint_of(good_token), first);
  EXPECT_NE(hint_of("tok-good-2"), first);
  EXPECT_EQ(hint_of("tok-good-2"), hint_of("tok-good-2"));
}

TEST_F(auth_flow, a_socket_without_the_tools_profile_sees_them_not_supported) {
  auto v1 = dp_client::connect(server.port(), server.key(), "echo", {{"supported_profiles", json::array{"xagent.im.v1"}}});
  ASSERT_TRUE(v1);
  std::string id = v1->open();
  auto ack = v1->authenticate(id);
  ASSERT_TRUE(ack);
  expect_descriptor(descriptor_in(*ack),
                    signed_in_descriptor(id, v1->connector_id(), {"xagent.im.v1"}, good_token_hint),
                    v1->card(), "im.v1 only");
}

TEST_F(auth_flow, the_token_invalid_fails_with_invalid_credentials) {
  auto ack = c->authenticate(channel, "invalid");
  expect_failed(ack, "invalid_credentials", "token invalid");
  // The plugin was asked, so there is a session, and it ended failed: auth.status answers from its record.
  std::string session = text_of(payload_of(*ack), "auth_session_id");
  EXPECT_TRUE(is_random_id(session, "auth_")) << session;
  EXPECT_EQ(text_of(payload_of(*ack), "flow_id"), "echo_token");
  auto status = c->request("auth.status", {{"flow_id", "echo_token"}, {"auth_session_id", session}}, channel);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->at("type"), "auth.status.ack");
  EXPECT_EQ(text_of(payload_of(*status), "status"), "failed");
  EXPECT_EQ(error_code(*status), "invalid_credentials");
  // Still signed out.
  EXPECT_EQ(current_status(), "created");
}

TEST_F(auth_flow, form_input_that_breaks_the_card_is_invalid_input) {
  struct bad {
    const char* why;
    std::optional<json::object> input;
  };
  std::vector<bad> cases = {
      {"input absent", std::nullopt},
      {"token missing", json::object{}},
      {"token empty", json::object{{"token", ""}}},
      {"token a number", json::object{{"token", 42}}},
      {"token null", json::object{{"token", nullptr}}},
      {"token an object", json::object{{"token", {{"a", "b"}}}}},
      {"a field the card does not declare", json::object{{"token", good_token}, {"extra", "x"}}},
  };
  for (auto& tc : cases) {
    auto ack = c->auth_start(channel, "echo_token", tc.input);
    expect_failed(ack, "invalid_input", tc.why);
    if (ack) {
      EXPECT_EQ(text_of(payload_of(*ack), "flow_id"), "echo_token") << tc.why;
    }
  }
  EXPECT_EQ(current_status(), "created");
}

TEST_F(auth_flow, an_unknown_flow_is_auth_flow_not_found) {
  auto ack = c->auth_start(channel, "no_such_flow", json::object{{"token", good_token}});
  expect_failed(ack, "auth_flow_not_found", "unknown flow");
  if (ack) {
    EXPECT_EQ(text_of(payload_of(*ack), "flow_id"), "no_such_flow");
  }
}

TEST_F(auth_flow, missing_or_mistyped_payload_fields_are_invalid_packet) {
  struct bad {
    const char* why;
    const char* type;
    json::object payload;
  };
  std::vector<bad> cases = {
      {"start without flow_id", "auth.start", {{"input", {{"token", good_token}}}}},
      {"start with a numeric flow_id", "auth.start", {{"flow_id", 7}, {"input", {{"token", good_token}}}}},
      {"start with input a string", "auth.start", {{"flow_id", "echo_token"}, {"input", "tok"}}},
      {"start with input an array", "auth.start", {{"flow_id", "echo_token"}, {"input", json::array{}}}},
      {"status without auth_session_id", "auth.status", {{"flow_id", "echo_qr_login"}}},
      {"status with a numeric auth_session_id", "auth.status", {{"flow_id", "echo_qr_login"}, {"auth_session_id", 5}}},
      {"cancel without auth_session_id", "auth.cancel", {}},
      {"cancel with a numeric auth_session_id", "auth.cancel", {{"auth_session_id", true}}},
  };
  for (auto& tc : cases) {
    auto reply = c->request(tc.type, tc.payload, channel);
    ASSERT_TRUE(reply) << tc.why;
    EXPECT_EQ(reply->at("type"), "error") << tc.why;
    EXPECT_EQ(error_code(*reply), "invalid_packet") << tc.why;
  }
  // Nothing of it signed the channel in or left a session running.
  EXPECT_EQ(current_status(), "created");
}

TEST_F(auth_flow, qr_login_goes_pending_scanned_authenticated) {
  auto start = qr_start();
  ASSERT_TRUE(start);
  EXPECT_EQ(start->at("type"), "auth.start.ack");
  EXPECT_EQ(error_code(*start), "");
  auto p = payload_of(*start);
  EXPECT_EQ(text_of(p, "connector_channel_id"), channel);
  EXPECT_EQ(text_of(p, "flow_id"), "echo_qr_login");
  EXPECT_EQ(text_of(p, "status"), "pending");
  EXPECT_TRUE(text_of(p, "qr_code_text").starts_with("echo-qr:")) << p;
  EXPECT_GT(text_of(p, "qr_code_text").size(), std::string("echo-qr:").size());
  ASSERT_TRUE(p.contains("expires_at") && p["expires_at"].is_int64()) << p;
  EXPECT_NEAR(static_cast<double>(p["expires_at"].as_int64()), static_cast<double>(now_ms() + 120000), 10000.0);
  EXPECT_EQ(p["poll_interval_millis"], 1000);
  EXPECT_FALSE(p.contains("connection_descriptor"));
  std::string session = text_of(p, "auth_session_id");
  ASSERT_TRUE(is_random_id(session, "auth_")) << session;

  // While the session runs the channel is authenticating.
  EXPECT_EQ(current_status(), "authenticating");

  auto scanned = qr_status(session);
  ASSERT_TRUE(scanned);
  EXPECT_EQ(scanned->at("type"), "auth.status.ack");
  EXPECT_EQ(text_of(payload_of(*scanned), "status"), "scanned");
  EXPECT_EQ(text_of(payload_of(*scanned), "auth_session_id"), session);
  EXPECT_EQ(text_of(payload_of(*scanned), "flow_id"), "echo_qr_login");
  EXPECT_EQ(text_of(payload_of(*scanned), "connector_channel_id"), channel);

  auto done = qr_status(session);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->at("type"), "auth.status.ack");
  EXPECT_EQ(error_code(*done), "");
  auto dp = payload_of(*done);
  EXPECT_EQ(text_of(dp, "status"), "authenticated");
  EXPECT_EQ(text_of(dp, "auth_session_id"), session);
  auto descriptor = dp["connection_descriptor"];
  ASSERT_TRUE(descriptor.is_object()) << dp;
  auto conn = descriptor.as_object()["connection"].as_object();
  EXPECT_EQ(conn["status"], "connected");
  EXPECT_EQ(conn["connector_channel_id"], json::value(channel));
  EXPECT_EQ(conn["connector_id"], json::value(c->connector_id()));

  // The completed authentication is also pushed to the channel's route.
  auto push = c->next_push("connection.descriptor.push", "", 5s);
  ASSERT_TRUE(push);
  EXPECT_EQ(text_of(*push, "connector_channel_id"), channel);
  EXPECT_EQ(payload_of(*push)["connection_descriptor"].as_object()["connection"].as_object()["status"], "connected");

  // An ended session is answered from its record: authenticated with the current descriptor.
  auto again = qr_status(session);
  ASSERT_TRUE(again);
  EXPECT_EQ(text_of(payload_of(*again), "status"), "authenticated");
  EXPECT_TRUE(payload_of(*again).contains("connection_descriptor"));
  EXPECT_EQ(current_status(), "connected");
}

TEST_F(auth_flow, qr_login_takes_no_input) {
  auto empty = c->auth_start(channel, "echo_qr_login", json::object{});
  ASSERT_TRUE(empty);
  EXPECT_EQ(text_of(payload_of(*empty), "status"), "pending");
  auto with_input = c->auth_start(channel, "echo_qr_login", json::object{{"token", good_token}});
  expect_failed(with_input, "invalid_input", "qr_login with input");
}

TEST_F(auth_flow, refresh_issues_a_new_qr_code) {
  auto start = qr_start();
  ASSERT_TRUE(start);
  std::string session = text_of(payload_of(*start), "auth_session_id");
  std::string first = text_of(payload_of(*start), "qr_code_text");
  auto refreshed = qr_status(session, true);
  ASSERT_TRUE(refreshed);
  EXPECT_EQ(refreshed->at("type"), "auth.status.ack");
  auto p = payload_of(*refreshed);
  EXPECT_EQ(text_of(p, "status"), "pending");
  EXPECT_TRUE(text_of(p, "qr_code_text").starts_with("echo-qr:")) << p;
  EXPECT_NE(text_of(p, "qr_code_text"), first);
  EXPECT_EQ(text_of(p, "auth_session_id"), session);
}

TEST_F(auth_flow, an_unknown_session_is_auth_session_not_found) {
  auto reply = qr_status("auth_AAAAAAAAAAAAAAAAAAAAAA");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->at("type"), "error");
  EXPECT_EQ(error_code(*reply), "auth_session_not_found");

  // A session issued on another channel is not this channel's.
  std::string other = c->open();
  auto start = c->auth_start(other, "echo_qr_login", std::nullopt);
  ASSERT_TRUE(start);
  auto foreign = qr_status(text_of(payload_of(*start), "auth_session_id"));
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->at("type"), "error");
  EXPECT_EQ(error_code(*foreign), "auth_session_not_found");
}

TEST_F(auth_flow, cancel_of_a_running_session_cancels_it) {
  auto start = qr_start();
  ASSERT_TRUE(start);
  std::string session = text_of(payload_of(*start), "auth_session_id");
  auto cancel = c->request("auth.cancel", {{"auth_session_id", session}}, channel);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->at("type"), "auth.cancel.ack");
  EXPECT_EQ(error_code(*cancel), "");
  auto p = payload_of(*cancel);
  EXPECT_EQ(text_of(p, "connector_channel_id"), channel);
  EXPECT_EQ(text_of(p, "auth_session_id"), session);
  EXPECT_EQ(text_of(p, "status"), "canceled");
  EXPECT_EQ(text_of(p, "auth_status"), "unauthenticated");
  // The canceled session answers unauthenticated from its record, and no session runs any more.
  auto status = qr_status(session);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->at("type"), "auth.status.ack");
  EXPECT_EQ(text_of(payload_of(*status), "status"), "unauthenticated");
  EXPECT_EQ(current_status(), "created");
}

TEST_F(auth_flow, cancel_of_an_unknown_session_is_not_found) {
  auto cancel = c->request("auth.cancel", {{"auth_session_id", "auth_AAAAAAAAAAAAAAAAAAAAAA"}}, channel);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->at("type"), "auth.cancel.ack");
  auto p = payload_of(*cancel);
  EXPECT_EQ(text_of(p, "connector_channel_id"), channel);
  EXPECT_EQ(text_of(p, "status"), "not_found");
  EXPECT_EQ(text_of(p, "auth_status"), "unauthenticated");
}

TEST_F(auth_flow, cancel_of_an_authenticated_session_is_ignored_and_never_signs_out) {
  auto ack = c->authenticate(channel);
  ASSERT_TRUE(ack);
  std::string session = text_of(payload_of(*ack), "auth_session_id");
  auto cancel = c->request("auth.cancel", {{"auth_session_id", session}}, channel);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->at("type"), "auth.cancel.ack");
  auto p = payload_of(*cancel);
  EXPECT_EQ(text_of(p, "connector_channel_id"), channel);
  EXPECT_EQ(text_of(p, "status"), "ignored");
  EXPECT_EQ(text_of(p, "auth_status"), "authenticated");
  expect_descriptor(p["connection_descriptor"], signed_in(), c->card(), "auth.cancel.ack ignored");
  EXPECT_EQ(current_status(), "connected");
}

TEST_F(auth_flow, logout_signs_out_keeps_the_channel_and_is_idempotent) {
  ASSERT_TRUE(c->authenticate(channel));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "first logout" : "repeated logout");
    auto out = c->request("auth.logout", {}, channel);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->at("type"), "auth.logout.ack");
    EXPECT_EQ(error_code(*out), "");
    auto p = payload_of(*out);
    EXPECT_EQ(text_of(p, "status"), "ok");
    expect_descriptor(p["connection_descriptor"], signed_out(), c->card(), "auth.logout.ack");
  }
  EXPECT_EQ(current_status(), "created");
  // The channel keeps its id and its route; tools need a new sign-in.
  auto tool = c->invoke(channel, "echo_reverse", {{"text", "abc"}});
  ASSERT_TRUE(tool);
  EXPECT_EQ(tool->at("type"), "error");
  EXPECT_EQ(error_code(*tool), "connection_not_authenticated");
  // Signing in again works.
  auto again = c->authenticate(channel);
  ASSERT_TRUE(again);
  EXPECT_EQ(text_of(payload_of(*again), "status"), "authenticated");
}

TEST_F(auth_flow, logout_of_a_channel_never_signed_in_is_ok) {
  auto out = c->request("auth.logout", {}, channel);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->at("type"), "auth.logout.ack");
  EXPECT_EQ(text_of(payload_of(*out), "status"), "ok");
  expect_descriptor(payload_of(*out)["connection_descriptor"], signed_out(), c->card(), "logout when signed out");
}

TEST_F(auth_flow, logout_ends_a_running_session_as_canceled) {
  auto start = qr_start();
  ASSERT_TRUE(start);
  std::string running = text_of(payload_of(*start), "auth_session_id");
  ASSERT_EQ(text_of(payload_of(*start), "status"), "pending");
  auto out = c->request("auth.logout", {}, channel);
  ASSERT_TRUE(out);
  EXPECT_EQ(text_of(payload_of(*out), "status"), "ok");
  expect_descriptor(payload_of(*out)["connection_descriptor"], signed_out(), c->card(), "logout while pending");
  // Canceled sessions answer unauthenticated from their record; nothing runs any more.
  auto status = qr_status(running);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->at("type"), "auth.status.ack");
  EXPECT_EQ(text_of(payload_of(*status), "status"), "unauthenticated");
  EXPECT_EQ(current_status(), "created");
}

TEST_F(auth_flow, a_completed_session_reads_unauthenticated_after_a_logout) {
  auto start = qr_start();
  ASSERT_TRUE(start);
  std::string session = text_of(payload_of(*start), "auth_session_id");
  ASSERT_TRUE(qr_status(session));  // scanned
  auto done = qr_status(session);
  ASSERT_TRUE(done);
  ASSERT_EQ(text_of(payload_of(*done), "status"), "authenticated");
  auto out = c->request("auth.logout", {}, channel);
  ASSERT_TRUE(out);
  EXPECT_EQ(descriptor_in(*out)["connection"].as_object()["status"], "created");
  auto status = qr_status(session);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->at("type"), "auth.status.ack");
  EXPECT_EQ(text_of(payload_of(*status), "status"), "unauthenticated");
}

// A stale code is refreshed by the host at once, so xAgent gets the new one in the same answer; an expired run is
// over, and its status answers expired from then on without asking the plugin (relay_qr, tests/plugins/fixtures).
TEST(auth_flow_answers, qr_refresh_required_is_refreshed_at_once_and_expired_ends_the_run) {
  server_fixture server({"relay.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "relay");
  ASSERT_TRUE(c);
  auto signed_in = c->open_signed_in("relay_token", {{"token", "tok-relay-1"}});
  auto channel = c->open();
  auto start = c->auth_start(channel, "relay_qr", std::nullopt);
  ASSERT_TRUE(start);
  EXPECT_EQ(text_of(payload_of(*start), "qr_code_text"), "relay-qr:1");
  auto session = text_of(payload_of(*start), "auth_session_id");
  auto status = [&] {
    return c->request("auth.status", {{"flow_id", "relay_qr"}, {"auth_session_id", session}}, channel);
  };
  auto qr_calls = [&] {
    auto ack = c->invoke(signed_in, "relay_log", {});
    return ack ? payload_of(*ack)["result"].as_object()["qr_status_calls"].to_number<int>() : -1;
  };

  auto refreshed = status();
  ASSERT_TRUE(refreshed);
  EXPECT_EQ(text_of(payload_of(*refreshed), "status"), "pending") << json::serialize(*refreshed);
  EXPECT_EQ(text_of(payload_of(*refreshed), "qr_code_text"), "relay-qr:2");
  EXPECT_EQ(qr_calls(), 2) << "the poll and the host's own refresh";

  auto expired = status();
  ASSERT_TRUE(expired);
  EXPECT_EQ(text_of(payload_of(*expired), "status"), "expired");
  EXPECT_EQ(text_of(payload_of(*expired), "message"), "the relay's code expired");
  auto again = status();
  ASSERT_TRUE(again);
  EXPECT_EQ(text_of(payload_of(*again), "status"), "expired");
  EXPECT_EQ(qr_calls(), 3) << "an expired run is answered by the host";
  auto d = c->get_descriptor(channel);
  ASSERT_TRUE(d);
  EXPECT_EQ(text_of(descriptor_in(*d)["connection"].as_object(), "status"), "created");
}

// A plugin's channel status report (plugin.h xconn_host_channel_status) that is not what the header says is refused
// whole, changes nothing, and never reaches a log line or a packet, even when it carries a secret.
TEST(channel_status_reports, malformed_or_hostile_reports_are_refused_and_quoted_nowhere) {
  const std::string secret = "sk-PLANTED-report-5d1e";
  log_capture logs;
  {
    server_fixture server({"relay.so"});
    server.start();
    auto c = dp_client::connect(server.port(), server.key(), "relay");
    ASSERT_TRUE(c);
    auto channel = c->open_signed_in("relay_token", {{"token", "tok-relay-1"}});
    auto report = [&](const std::string& text) {
      auto ack = c->invoke(channel, "relay_report", {{"report", text}});
      EXPECT_TRUE(ack && error_code(*ack).empty()) << (ack ? json::serialize(*ack) : "no answer");
      return ack ? payload_of(*ack)["result"].as_object()["taken"].as_bool() : true;
    };
    const std::vector<std::string> hostile{
        "",
        "not json " + secret,
        "[\"revoked\"]",
        R"({"status":")" + secret + R"("})",
        R"({"status":"revoked","extra":")" + secret + R"("})",
        R"({"status":"created"})",
        R"({"status":7})",
        R"({"status":"degraded","tools":"all"})",
        R"({"status":"degraded","tools":[{"tool_id":")" + secret + R"(","status":"available","target_permission_state":"granted"}]})",
        R"({"status":"degraded","tools":[{"tool_id":"relay_log","status":"sleeping","target_permission_state":"granted"}]})",
        R"({"status":"degraded","tools":[{"tool_id":"relay_log"}]})",
        R"({"status":"degraded"})" + std::string(1, '\0'),
        std::string(100000, '{'),
    };
    for (const auto& text : hostile) EXPECT_FALSE(report(text)) << text.substr(0, 80);
    auto d = c->get_descriptor(channel);
    ASSERT_TRUE(d);
    EXPECT_EQ(text_of(descriptor_in(*d)["connection"].as_object(), "status"), "connected") << "nothing changed";
    EXPECT_TRUE(report(R"({"status":"degraded"})")) << "a good report after them is taken";
    EXPECT_EQ(last_pushed_status(*c, channel, "degraded", std::chrono::seconds(5)), "degraded");
    for (const auto& text : c->received()) EXPECT_EQ(text.find(secret), std::string::npos) << text;
    auto events = http_get(server.port(), "/connectors/relay/events?limit=1000", server.key());
    EXPECT_EQ(events.body.find(secret), std::string::npos);
    c.reset();
    server.stop();
  }
  auto text = logs.text();
  EXPECT_FALSE(text.empty()) << "the capture is not working";
  EXPECT_EQ(text.find(secret), std::string::npos) << text;
}

TEST(auth_flow_secrets, a_planted_token_reaches_no_packet_no_http_answer_and_no_log_line) {
  const std::string secret = "tok-SECRET-7f3a9c-planted";
  log_capture logs;
  {
    server_fixture server;
    server.start();
    auto c = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(c);
    std::string channel = c->open();
    ASSERT_FALSE(channel.empty());

    // Authenticate with it.
    auto ok = c->authenticate(channel, secret);
    ASSERT_TRUE(ok);
    EXPECT_EQ(text_of(payload_of(*ok), "status"), "authenticated");
    auto hint = text_of(descriptor_in(*ok)["target"].as_object(), "account_hint");
    EXPECT_TRUE(std::regex_match(hint, std::regex("echo-[0-9a-f]{6}"))) << hint;
    EXPECT_NE(hint, "echo-" + echo::sha256_hex(secret).substr(0, 6)) << "no bare hash of the token";
    // Fail with it, twice: a field the card does not declare, and the secret where the flow id goes.
    auto bad = c->auth_start(channel, "echo_token", json::object{{"token", secret}, {"extra", secret}});
    ASSERT_TRUE(bad);
    EXPECT_EQ(error_code(*bad), "invalid_input");
    std::string other = c->open();
    auto bad_type = c->auth_start(other, "echo_token", json::object{{"token", json::array{secret}}});
    ASSERT_TRUE(bad_type);
    EXPECT_EQ(error_code(*bad_type), "invalid_input");
    // Use the channel and sign out.
    auto tool = c->invoke(channel, "echo_reverse", {{"text", "abc"}});
    ASSERT_TRUE(tool);
    auto out = c->request("auth.logout", {}, channel);
    ASSERT_TRUE(out);
    auto get = c->get_descriptor(channel);
    ASSERT_TRUE(get);

    for (const auto& text : c->received()) EXPECT_EQ(text.find(secret), std::string::npos) << text;
    auto health = http_get(server.port(), "/connectors/echo/health", server.key());
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.body.find(secret), std::string::npos) << health.body;
    auto list = http_get(server.port(), "/connectors", server.key());
    EXPECT_EQ(list.status, 200);
    EXPECT_EQ(list.body.find(secret), std::string::npos) << list.body;
    c.reset();
    server.stop();
  }
  auto text = logs.text();
  EXPECT_FALSE(text.empty()) << "the server logged nothing at all: the capture is not working";
  EXPECT_EQ(text.find(secret), std::string::npos) << text;
}

}  // namespace
}  // namespace xconn::test
