// Auth flows on the real server with echo (spec §8.7-8.14; docs/protocol.md "Auth flows"; plugin-contract.md
// "The reference plugin echo"), and the auth secret kept out of every packet, /health and the log.
#include "core/log.hpp"

#include "support/server_fixture.hpp"
#include "support/xagent_session.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace xconn::test {
namespace {
namespace json = boost::json;

class auth : public ::testing::Test {
 protected:
  void SetUp() override { channel = std::string(s.open().at("connector_channel_id").as_string()); }
  json::object start(json::object payload) { return s.call("auth.start", channel, std::move(payload)); }
  json::object status(const std::string& session, bool refresh = false) {
    return s.call("auth.status", channel, {{"flow_id", "echo_qr_login"}, {"auth_session_id", session}, {"refresh", refresh}});
  }

  server_fixture server;
  // Started first and stopped last: members are made in order and destroyed in reverse.
  xagent_session s{(server.start(), server.port()), server.key()};
  std::string channel;
};

TEST_F(auth, a_good_token_signs_in_with_a_connected_descriptor) {
  auto ack = s.sign_in(channel, "good-token-for-echo");
  ASSERT_EQ(ack.at("type"), "auth.start.ack");
  const auto& p = ack.at("payload").as_object();
  EXPECT_EQ(p.at("status"), "authenticated");
  EXPECT_EQ(p.at("connector_channel_id").as_string(), channel);
  EXPECT_EQ(p.at("flow_id"), "echo_token");
  EXPECT_TRUE(std::regex_match(std::string(p.at("auth_session_id").as_string()), std::regex("auth_[0-9A-Za-z]{22}")));
  EXPECT_EQ(schema_violations("xagent.connection.v2", json::serialize(descriptor_of(ack))), "");
  const auto& d = descriptor_of(ack);
  EXPECT_EQ(d.at("connection").at("status"), "connected");
  EXPECT_EQ(d.at("target").at("display_name"), "Echo user");
  EXPECT_TRUE(std::regex_match(std::string(d.at("target").at("account_hint").as_string()), std::regex("echo-[0-9a-f]{6}")));
  for (const auto& t : d.at("tools").as_array()) {
    EXPECT_EQ(t.at("status"), "available");
    EXPECT_EQ(t.at("target_permission_state"), "granted");
  }
  auto push = s.wait_push("connection.descriptor.push");
  ASSERT_TRUE(push);
  EXPECT_EQ(push->at("connector_channel_id").as_string(), channel);
  EXPECT_EQ(status_of_descriptor(*push), "connected");
  EXPECT_EQ(s.violations(), "");
}

TEST_F(auth, business_failures_are_failed_acks_with_a_code) {
  auto bad = s.sign_in(channel, "invalid");
  EXPECT_EQ(bad.at("type"), "auth.start.ack");
  EXPECT_EQ(bad.at("payload").at("status"), "failed");
  EXPECT_EQ(error_code_of(bad), "invalid_credentials");

  for (auto input : {json::object{}, json::object{{"token", ""}}, json::object{{"token", "x"}, {"extra", "y"}},
                     json::object{{"token", 42}}}) {
    auto ack = start({{"flow_id", "echo_token"}, {"input", input}});
    EXPECT_EQ(ack.at("payload").at("status"), "failed") << json::serialize(input);
    EXPECT_EQ(error_code_of(ack), "invalid_input") << json::serialize(input);
  }
  auto unknown = start({{"flow_id", "no_such_flow"}});
  EXPECT_EQ(unknown.at("payload").at("status"), "failed");
  EXPECT_EQ(error_code_of(unknown), "auth_flow_not_found");

  EXPECT_EQ(error_code_of(start({})), "invalid_packet");
  EXPECT_EQ(error_code_of(start({{"flow_id", "echo_token"}, {"input", "token"}})), "invalid_packet");
  EXPECT_EQ(s.violations(), "");
}

TEST_F(auth, qr_login_goes_pending_scanned_authenticated_and_refreshes) {
  auto started = start({{"flow_id", "echo_qr_login"}});
  const auto& p = started.at("payload").as_object();
  ASSERT_EQ(p.at("status"), "pending");
  std::string session(p.at("auth_session_id").as_string());
  std::string qr(p.at("qr_code_text").as_string());
  EXPECT_TRUE(qr.starts_with("echo-qr:")) << qr;
  EXPECT_EQ(p.at("poll_interval_millis"), 1000);
  auto expires = p.at("expires_at").as_int64();
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(static_cast<double>(expires - now), 120000.0, 5000.0);
  // While it runs the channel is authenticating.
  EXPECT_EQ(status_of_descriptor(s.call("connection.descriptor.get", channel)), "authenticating");

  auto refreshed = status(session, true);
  EXPECT_EQ(refreshed.at("payload").at("status"), "pending");
  EXPECT_NE(refreshed.at("payload").at("qr_code_text").as_string(), qr);

  EXPECT_EQ(status(session).at("payload").at("status"), "scanned");
  auto done = status(session);
  ASSERT_EQ(done.at("type"), "auth.status.ack");
  EXPECT_EQ(done.at("payload").at("status"), "authenticated");
  EXPECT_EQ(status_of_descriptor(done), "connected");
  EXPECT_TRUE(s.wait_push("connection.descriptor.push"));
  // Asked again, the ended run answers from its record.
  EXPECT_EQ(status(session).at("payload").at("status"), "authenticated");

  auto unknown = status("auth_unknown");
  EXPECT_EQ(unknown.at("type"), "error");
  EXPECT_EQ(error_code_of(unknown), "auth_session_not_found");
  EXPECT_EQ(s.violations(), "");
}

TEST_F(auth, cancel_is_not_logout) {
  auto pending = start({{"flow_id", "echo_qr_login"}});
  std::string session(pending.at("payload").at("auth_session_id").as_string());
  auto canceled = s.call("auth.cancel", channel, {{"auth_session_id", session}});
  ASSERT_EQ(canceled.at("type"), "auth.cancel.ack");
  EXPECT_EQ(canceled.at("payload").at("status"), "canceled");
  EXPECT_EQ(canceled.at("payload").at("auth_status"), "unauthenticated");
  EXPECT_EQ(status(session).at("payload").at("status"), "unauthenticated");

  auto missing = s.call("auth.cancel", channel, {{"auth_session_id", "auth_nothing"}});
  EXPECT_EQ(missing.at("payload").at("status"), "not_found");

  auto signed_in = s.sign_in(channel, "cancel-test-token");
  std::string done(signed_in.at("payload").at("auth_session_id").as_string());
  auto ignored = s.call("auth.cancel", channel, {{"auth_session_id", done}});
  EXPECT_EQ(ignored.at("payload").at("status"), "ignored");
  EXPECT_EQ(ignored.at("payload").at("auth_status"), "authenticated");
  EXPECT_EQ(status_of_descriptor(ignored), "connected");
  // Still signed in: cancel never signs out.
  EXPECT_EQ(s.invoke(channel, "echo_reverse", {{"text", "ab"}}).at("payload").at("result").at("text"), "ba");
}

TEST_F(auth, logout_keeps_the_channel_and_is_idempotent) {
  ASSERT_EQ(s.sign_in(channel, "logout-test-token").at("payload").at("status"), "authenticated");
  for (int i = 0; i < 2; ++i) {
    auto ack = s.call("auth.logout", channel);
    ASSERT_EQ(ack.at("type"), "auth.logout.ack");
    EXPECT_EQ(ack.at("payload").at("status"), "ok");
    EXPECT_EQ(status_of_descriptor(ack), "created");
    EXPECT_EQ(schema_violations("xagent.connection.v2", json::serialize(descriptor_of(ack))), "");
  }
  EXPECT_EQ(error_code_of(s.invoke(channel, "echo_reverse", {{"text", "x"}})), "connection_not_authenticated");
  EXPECT_EQ(s.open(channel).at("connector_channel_id").as_string(), channel);
}

TEST(auth_secrets, a_planted_token_reaches_no_packet_health_list_or_log_line) {
  temp_dir logs;
  auto log_file = logs.path() / "xconn.log";
  log::init(spdlog::level::debug, log_file.string());
  {
    server_fixture server;
    server.start();
    xagent_session s(server.port(), server.key());
    std::string channel(s.open().at("connector_channel_id").as_string());
    const std::string secret = "tok-SECRET-7f3a9c-planted";
    ASSERT_EQ(s.sign_in(channel, secret).at("payload").at("status"), "authenticated");
    s.sign_in(channel, secret + "-again");
    s.call("auth.start", channel, {{"flow_id", "echo_token"}, {"input", {{"token", secret}, {"unknown", secret}}}});
    s.call("auth.start", channel, {{"flow_id", "no_flow"}, {"input", {{"token", secret}}}});
    s.call("auth.logout", channel);
    s.call("connection.descriptor.get", channel);
    EXPECT_EQ(s.transcript().find("SECRET-7f3a9c"), std::string::npos);
    EXPECT_EQ(http_get(server.port(), "/connectors/echo/health", server.key()).body.find("SECRET"), std::string::npos);
    EXPECT_EQ(http_get(server.port(), "/connectors", server.key()).body.find("SECRET"), std::string::npos);
    server.stop();
  }
  spdlog::default_logger()->flush();
  auto text = read_file(log_file);
  log::init();
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.find("SECRET-7f3a9c"), std::string::npos) << text;
}

}  // namespace
}  // namespace xconn::test
