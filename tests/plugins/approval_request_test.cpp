// The approval_request carrier (ABI 1.6 xconn_host_approval_request) through a real .so on the real server: the
// approver fixture asks for an approval on a route, and the host refuses it as "unsupported" (no Protocol 3.0 packet
// carries one) with an `error` event on {base}/events naming the channel when it is the plugin's. Plugins built
// against older headers keep loading beside it (abi_compat_test, echo_abi_test).
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

json::object ask(server_fixture& server, const std::string& channel, const std::string& request) {
  auto r = http_call(server.port(), "POST", "/connectors/approver/approve/" + channel,
                     {{"Authorization", "Bearer " + server.key()}}, request);
  EXPECT_EQ(r.status, 200) << r.body;
  auto v = r.json();
  return v.is_object() ? v.as_object() : json::object{};
}

std::vector<json::object> refusals(server_fixture& server) {
  std::vector<json::object> out;
  auto r = http_get(server.port(), "/connectors/approver/events?limit=1000", server.key());
  EXPECT_EQ(r.status, 200) << r.body;
  auto page = r.json();
  if (!page.is_object()) return out;
  for (const auto& e : page.as_object().at("events").as_array())
    if (text_of(e.as_object(), "event_type") == "error") out.push_back(e.as_object());
  return out;
}

TEST(approval_request, the_host_refuses_it_as_unsupported_and_records_an_error_event) {
  server_fixture server({"approver.so", "echo.so"});
  server.start();
  auto c = dp_client::connect(server.port(), server.key(), "approver");
  ASSERT_TRUE(c);
  auto channel = c->open();
  ASSERT_FALSE(channel.empty());
  const std::string request = R"({"kind":"payment","summary":"planted-approval-text-77"})";

  auto answer = ask(server, channel, request);
  EXPECT_EQ(answer.at("ok"), false);
  EXPECT_EQ(text_of(answer, "code"), "unsupported");
  EXPECT_NE(text_of(answer, "message").find("approval"), std::string::npos) << text_of(answer, "message");
  EXPECT_EQ(text_of(answer, "message_id"), "");

  // A channel that is not the plugin's: refused the same, and the event names no channel.
  auto stranger = ask(server, "cch_not_a_channel_of_this_one", request);
  EXPECT_EQ(text_of(stranger, "code"), "unsupported");

  auto until = std::chrono::steady_clock::now() + 5s;
  auto events = refusals(server);
  while (events.size() < 2 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
    events = refusals(server);
  }
  ASSERT_EQ(events.size(), 2u);
  for (const auto& e : events) {
    const auto& payload = e.at("payload").as_object();
    EXPECT_EQ(text_of(payload, "kind"), "approval_request");
    EXPECT_EQ(text_of(payload, "code"), "unsupported");
    EXPECT_EQ(text_of(payload, "direction"), "inbound");
    EXPECT_FALSE(text_of(e, "correlation_id").empty());
    // Metadata only: the request's own text is kept nowhere.
    EXPECT_EQ(json::serialize(e).find("planted-approval-text-77"), std::string::npos);
  }
  EXPECT_EQ(text_of(events[0], "session_id"), channel);
  EXPECT_FALSE(events[1].contains("session_id"));

  // The plugin and the server go on serving.
  EXPECT_EQ(text_of(ask(server, channel, "{}"), "code"), "unsupported");
  auto echo = dp_client::connect(server.port(), server.key(), "echo");
  ASSERT_TRUE(echo);
  EXPECT_FALSE(echo->open_authenticated().empty());
}

}  // namespace
}  // namespace xconn::test
