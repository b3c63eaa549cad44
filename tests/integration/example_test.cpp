// The example adapter (plugins/example, docs/plugin-api.md "Writing a network adapter") on the real server against
// the fake chat server (support/fake_chat) on loopback: sign-in and its refusal, one connection for every channel of
// a (server, user), each room message emitted once (a restart does not replay it: the cursor is in the host's kv),
// a final sent, a restore that verifies before connected (and revokes a changed password), and an outage.
#include "support/adapter_channel_fixture.hpp"
#include "support/fake_chat.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace xconn::test {
namespace example_cases {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string bob_password = "planted-chat-pass-41e0";

class example_adapter : public adapter_channel_fixture {
 protected:
  example_adapter()
      : adapter_channel_fixture(
            "example", [](config& c) { c.connectors["example"].config = json::object{{"sign_in_timeout_s", 2}}; }) {}

  json::object login(const std::string& password = bob_password) {
    return {{"server", chat.address()}, {"user", "bob"}, {"password", password}};
  }
  std::string bound() { return dp->open_signed_in("chat_login", login()); }

  fake_chat chat{{{"bob", bob_password}}};
};

TEST_F(example_adapter, a_sign_in_binds_the_room_and_a_wrong_password_is_refused) {
  auto refused = dp->auth_start(dp->open(), "chat_login", login("wrong"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(error_code(*refused), "invalid_credentials") << json::serialize(*refused);

  auto channel = dp->open();
  auto ack = dp->auth_start(channel, "chat_login", login());
  ASSERT_TRUE(ack);
  ASSERT_EQ(text_of(payload_of(*ack), "status"), "authenticated") << json::serialize(*ack);
  auto target = descriptor_in(*ack)["target"].as_object();
  EXPECT_EQ(text_of(target, "display_name"), "lobby on " + chat.address());
  EXPECT_EQ(text_of(target, "account_hint"), "bob");
  EXPECT_EQ(json::serialize(*ack).find(bob_password), std::string::npos);
  EXPECT_EQ(status_of(channel), "connected");
}

// A server that takes the connection and never answers is away, not a wrong password: retryable, after the
// configured sign_in_timeout_s.
TEST_F(example_adapter, a_server_that_never_answers_is_target_unreachable_after_the_sign_in_timeout) {
  int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(silent, 4), 0);  // the kernel takes the connection; nobody ever reads it
  socklen_t len = sizeof addr;
  ::getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &len);
  auto started = std::chrono::steady_clock::now();
  json::object input{{"server", "127.0.0.1:" + std::to_string(ntohs(addr.sin_port))}, {"user", "bob"},
                     {"password", bob_password}};
  auto ack = dp->auth_start(dp->open(), "chat_login", input);
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ::close(silent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(error_code(*ack), "target_unreachable") << json::serialize(*ack);
  EXPECT_GE(seconds, 1.5);
  EXPECT_LT(seconds, 8.0);
}

TEST_F(example_adapter, two_channels_of_one_user_share_one_connection_and_each_gets_every_room_message_once) {
  auto first = bound();
  auto second = bound();
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  EXPECT_EQ(chat.sign_ins(), 1);
  EXPECT_TRUE(wait_until([&] { return chat.open_connections() == 1; }, 5s));

  chat.say("ann", "where is the report?");
  for (const auto& channel : {first, second}) {
    auto m = next_message(channel);
    ASSERT_TRUE(m) << channel;
    EXPECT_EQ(text_of(*m, "text"), "where is the report?");
    EXPECT_EQ(text_of(m->at("sender").as_object(), "name"), "ann");
  }
}

// A line break in a final (or a sign-in field) never starts a protocol line of its own.
TEST_F(example_adapter, a_final_goes_out_as_one_send_whatever_its_line_breaks) {
  auto refused = dp->auth_start(dp->open(), "chat_login", login(bob_password + "\nSEND injected"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(error_code(*refused), "invalid_input") << json::serialize(*refused);
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  auto p = reply(channel, "final-1", "the report\r\nSEND is in the drive");
  EXPECT_EQ(text_of(p, "status"), "accepted") << json::serialize(p);
  EXPECT_TRUE(wait_until([&] { return chat.sent().size() == 1; }, 5s));
  ASSERT_EQ(chat.sent(), std::vector<std::string>{"bob: the report  SEND is in the drive"});
}

TEST_F(example_adapter, a_restart_restores_the_channel_and_replays_no_message_it_already_emitted) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  chat.say("ann", "one");
  auto first = next_message(channel);
  ASSERT_TRUE(first);
  EXPECT_EQ(text_of(*first, "text"), "one");

  restart({channel}, [&] { chat.say("ann", "two"); });
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 10s)) << status_of(channel);
  // The connection asked for what came after the kept cursor: "two" arrives, "one" does not again.
  auto next = next_message(channel);
  ASSERT_TRUE(next);
  EXPECT_EQ(text_of(*next, "text"), "two");
  EXPECT_EQ(chat.sinces().back(), 1);
  chat.say("ann", "three");
  auto third = next_message(channel);
  ASSERT_TRUE(third);
  EXPECT_EQ(text_of(*third, "text"), "three");
}

TEST_F(example_adapter, a_restore_whose_password_was_changed_meanwhile_turns_the_channel_revoked) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  restart({channel}, [&] { chat.set_password("bob", "changed-meanwhile"); });
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "revoked"; }, 10s)) << status_of(channel);
}

TEST_F(example_adapter, a_restore_during_an_outage_is_degraded_then_connected_by_itself) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  restart({channel}, [&] { chat.go_away(); });
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  auto refused = reply(channel, "while-away", "anyone?");
  EXPECT_EQ(text_of(refused, "code"), "target_unreachable") << json::serialize(refused);
  chat.come_back();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 10s)) << status_of(channel);
}

TEST_F(example_adapter, a_server_that_goes_away_turns_the_channel_degraded_and_connected_again_with_backoff) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  chat.go_away();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  chat.say("ann", "said while the adapter was away");
  auto back = std::chrono::steady_clock::now();
  chat.come_back();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "connected"; }, 10s)) << status_of(channel);
  std::printf("[ measure ] example outage: connected %.2f s after the chat server was back\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - back).count());
  auto m = next_message(channel);
  ASSERT_TRUE(m) << "the message said during the outage was not fetched after it";
  EXPECT_EQ(text_of(*m, "text"), "said while the adapter was away");
  EXPECT_EQ(chat.sign_ins(), 2);
}

TEST_F(example_adapter, a_password_refused_on_a_reconnect_turns_the_channel_revoked) {
  auto channel = bound();
  ASSERT_FALSE(channel.empty());
  chat.go_away();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "degraded"; }, 10s)) << status_of(channel);
  chat.set_password("bob", "changed-meanwhile");
  chat.come_back();
  ASSERT_TRUE(wait_until([&] { return status_of(channel) == "revoked"; }, 10s)) << status_of(channel);
  auto p = reply(channel, "after-revoke", "still there?");
  EXPECT_EQ(text_of(p, "code"), "connection_not_authenticated") << json::serialize(p);
}

}  // namespace example_cases
}  // namespace xconn::test
