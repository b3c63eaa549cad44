// What the server reads before the API key is checked (docs/security.md "Before the key"): a request without a valid
// key on a keyed route is answered 401 from its header alone, none of its body read, and the connection closed; keyed
// requests read and serve their bodies as before; bodies of public routes (a plugin's public route, the probes, the
// public documents, signed downloads) count against server.max_public_body_bytes, all connections together, and a
// request that would go past it is answered 503 with Retry-After before its body is read.
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/upload_client.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

// A named namespace: the test sources are built together (unity), so file-local names must not collide.
namespace xconn::test::keyless_body {
using namespace std::chrono_literals;

constexpr std::uint64_t mib = 1024 * 1024;

std::map<std::string, std::string> with_length(std::uint64_t length, std::map<std::string, std::string> h = {}) {
  h["Content-Length"] = std::to_string(length);
  return h;
}

// Sends only the head of a request that declares a body, never the body; the answer must come all the same.
std::optional<raw_response> answer_to_head(unsigned short port, const std::string& method, const std::string& target,
                                           const std::map<std::string, std::string>& headers,
                                           std::unique_ptr<raw_http>* keep = nullptr) {
  auto c = raw_http::connect(port);
  if (!c || !c->send(request_head(method, target, headers))) return std::nullopt;
  // Far below read_timeout (30 s): a server waiting for the body would not answer in time.
  auto r = c->read_response(5s);
  if (keep) *keep = std::move(c);
  return r;
}

// Whether a small keyless body on a public route is refused for the budget.
bool public_budget_full(unsigned short port, const std::string& target = "/livez") {
  auto r = raw_request(port, "GET", target, with_length(5), "12345", false, 5s);
  return r && r->status == 503;
}

// Opens a connection whose head declares a body it never sends, and returns it once that head holds the whole public
// budget (a probe is refused). Another request's bytes may still be counted when the head arrives (two I/O threads),
// and then the holder itself is refused: it tries again on a new connection.
std::unique_ptr<raw_http> hold_public_budget(unsigned short port, const std::string& head,
                                             const std::function<bool()>& budget_full) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto holder = raw_http::connect(port);
    if (!holder || !holder->send(head)) continue;
    bool held = false;
    wait_until([&] { return (held = budget_full()) || holder->readable(); }, 10s);
    if (held) return holder;
  }
  return nullptr;
}

class KeylessBody : public Files {
 protected:
  KeylessBody() : Files([](config& c) { c.server.max_public_body_bytes = mib; }) {}
};

TEST_F(KeylessBody, a_keyless_body_on_a_keyed_route_is_refused_on_its_header) {
  const std::string bad_key = "Bearer " + server.key() + "x";
  for (const std::string& target :
       {echo_base + "/inject", echo_base + "/reload", std::string("/admin/reload"), echo_base + "/files/uploads",
        echo_base + "/files/refs/fr_nothing", std::string("/metrics"), std::string("/no/such/route"),
        echo_base + "/channels"}) {
    for (std::uint64_t length : {mib, 100 * mib}) {
      for (const std::string& auth : {std::string(), bad_key}) {
        auto h = with_length(length, {{"Content-Type", "application/json"}});
        if (!auth.empty()) h["Authorization"] = auth;
        std::unique_ptr<raw_http> conn;
        auto r = answer_to_head(server.port(), "POST", target, h, &conn);
        ASSERT_TRUE(r) << target << " " << length << " answered nothing while its body was not sent";
        EXPECT_EQ(r->status, 401) << target << " " << r->head;
        EXPECT_EQ(r->error_code(), "unauthorized") << target << " " << r->body;
        EXPECT_EQ(r->header("connection"), "close") << target;
        // The body was not read: the server does not wait for it, it closes.
        EXPECT_TRUE(conn->closed_within(5s)) << target;
        EXPECT_EQ(r->body.find(server.key()), std::string::npos);
      }
    }
  }
}

TEST_F(KeylessBody, a_keyless_upgrade_with_a_body_is_refused_on_its_header) {
  auto r = answer_to_head(server.port(), "GET", echo_base + "/ws",
                          with_length(mib, {{"Connection", "Upgrade"}, {"Upgrade", "websocket"},
                                            {"Sec-WebSocket-Version", "13"},
                                            {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401) << r->head;
  EXPECT_EQ(r->error_code(), "unauthorized");
}

TEST_F(KeylessBody, keyed_bodies_are_read_and_served_on_every_body_route) {
  // /inject (a plugin's keyed route): the message arrives on the data plane.
  auto r = inject(channel, {{"text", "still served"}});
  EXPECT_LT(r.status, 300) << r.body;
  // An upload is streamed into the store and can be read back.
  auto data = std::string(300 * 1024, 'u');
  auto ref = upload_ref(data);
  ASSERT_FALSE(ref.empty());
  auto back = get_with_key(ref);
  EXPECT_EQ(back.status, 200);
  EXPECT_EQ(back.body, data);
  // A keyed body is not counted against the public budget: bodies past it are read all the same.
  auto holder = hold_public_budget(server.port(), request_head("GET", "/livez", with_length(mib)),
                                  [&] { return public_budget_full(server.port()); });
  ASSERT_TRUE(holder);
  for (int i = 0; i < 3; ++i) {
    auto again = inject(channel, {{"text", "keyed past the budget " + std::to_string(i)}});
    EXPECT_LT(again.status, 300) << again.body;
  }
  EXPECT_FALSE(upload_ref("x").empty());
}

// The public budget: one connection holds all of it (1 MiB declared, the body not yet sent).
TEST_F(KeylessBody, public_bodies_past_the_budget_get_503_and_the_budget_comes_back) {
  const std::string doc = echo_base + "/connector-card.json";
  auto refused = [&](const std::string& target) { return public_budget_full(server.port(), target); };
  auto holder = hold_public_budget(server.port(), request_head("GET", doc, with_length(mib)), [&] { return refused("/livez"); });
  ASSERT_TRUE(holder) << "the holder's header took the budget";
  auto r = raw_request(server.port(), "GET", "/livez", with_length(5), "12345", false, 5s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->error_code(), "busy") << r->body;
  EXPECT_EQ(r->header("retry-after"), "1");
  EXPECT_EQ(r->header("connection"), "close");
  // Another public body, and a chunked one (counted as the most it may be), are refused on their header too.
  EXPECT_TRUE(refused(doc));
  auto chunked = answer_to_head(server.port(), "GET", "/readyz", {{"Transfer-Encoding", "chunked"}});
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 503);
  // A public request without a body takes nothing, and a keyed one is not counted.
  EXPECT_EQ(http_call(server.port(), "GET", "/livez").status, 200);
  EXPECT_EQ(http_get(server.port(), echo_base + "/health", server.key()).status, 200);

  // The holder's body arrives: it is answered, and its bytes go back to the budget.
  ASSERT_TRUE(holder->send(std::string(mib, ' ')));
  auto answered = holder->read_response(10s);
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->status, 200) << answered->head;
  EXPECT_TRUE(wait_until([&] { return !refused("/livez"); }, 10s));

  // A holder that goes away without its body gives the budget back as well.
  auto leaver = hold_public_budget(server.port(), request_head("GET", "/livez", with_length(mib)) + "partial",
                                  [&] { return refused("/livez"); });
  ASSERT_TRUE(leaver);
  leaver.reset();
  EXPECT_TRUE(wait_until([&] { return !refused("/livez"); }, 10s));
}

// The webhook plugin's public route (POST {base}/in/{id}) reads a keyless body within the budget and refuses one past it.
TEST(KeylessWebhook, a_plugin_public_route_reads_keyless_bodies_within_the_budget) {
  server_fixture server({"webhook.so"}, [](config& c) { c.server.max_public_body_bytes = mib; });
  server.start();
  const std::string in = "/connectors/webhook/in/cch_AAAAAAAAAAAAAAAAAAAAAA";
  // Within the budget the plugin gets the body and answers it itself (an unsigned request: 401 from the plugin).
  auto r = raw_request(server.port(), "POST", in, {{"Content-Type", "application/json"}}, "{}", false, 5s);
  ASSERT_TRUE(r);
  EXPECT_NE(r->status, 503);
  EXPECT_NE(r->status, 0);
  // A keyless body on a route the plugin does not declare public is refused on its header.
  auto keyed_only = answer_to_head(server.port(), "POST", "/connectors/webhook/in", with_length(mib));
  ASSERT_TRUE(keyed_only);
  EXPECT_EQ(keyed_only->status, 401);

  auto holder = hold_public_budget(
      server.port(), request_head("POST", in, with_length(mib, {{"Content-Type", "application/json"}})), [&] {
        auto again = raw_request(server.port(), "POST", in, {{"Content-Type", "application/json"}}, "{}", false, 5s);
        return again && again->status == 503 && again->header("retry-after") == "1";
      });
  EXPECT_TRUE(holder);
  holder.reset();
  EXPECT_TRUE(wait_until(
      [&] {
        auto again = raw_request(server.port(), "POST", in, {{"Content-Type", "application/json"}}, "{}", false, 5s);
        return again && again->status != 503 && again->status != 0;
      },
      10s));
  server.stop();
}

}  // namespace xconn::test::keyless_body
