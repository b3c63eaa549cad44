// Plugin routes with ABI 1.3 (plugin.h on_http_request), through the fixture plugin relay: a route ending in a
// {param} segment, the request's headers and raw body reach the plugin (the API key does not, on a keyed route),
// the plugin's response headers reach the client, and the headers the host owns cannot be set.
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace xconn::test {
namespace {
namespace json = boost::json;

class plugin_http : public ::testing::Test {
 protected:
  void SetUp() override { server.start(); }
  server_fixture server{{"relay.so"}};
};

TEST_F(plugin_http, a_public_param_route_gets_the_parameter_the_headers_and_the_raw_body) {
  const std::string body("t=1\0\xff raw", 9);
  auto r = http_call(server.port(), "POST", "/connectors/relay/in/cch_Abc-1.x?since=5",
                     {{"X-Xconn-Signature", "t=1,v1=abc"}, {"X-Repeat", "a"}, {"Authorization", "Bearer theirs"}}, body);
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.headers["x-relay-seen"], "yes");
  auto seen = r.json().as_object();
  EXPECT_EQ(seen["path"], "/in/cch_Abc-1.x");
  EXPECT_EQ(seen["path_param"], "cch_Abc-1.x");
  EXPECT_EQ(seen["query"], "since=5");
  auto headers = seen["headers"].as_object();
  EXPECT_EQ(headers["x-xconn-signature"], "t=1,v1=abc");
  EXPECT_EQ(headers["authorization"], "Bearer theirs");  // public: the plugin checks callers itself
  EXPECT_EQ(seen["body_hex"], "743d3100ff20726177");
}

TEST_F(plugin_http, a_keyed_route_needs_the_key_and_never_passes_it_on) {
  EXPECT_EQ(http_call(server.port(), "POST", "/connectors/relay/keyed/x1", {}, "{}").status, 401);
  auto r = http_call(server.port(), "POST", "/connectors/relay/keyed/x1", {{"Authorization", "Bearer " + server.key()}},
                     "{}");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_FALSE(r.json().as_object()["headers"].as_object().contains("authorization"));
  EXPECT_EQ(r.body.find(server.key()), std::string::npos);
}

TEST_F(plugin_http, paths_that_do_not_fit_the_parameter_are_not_the_plugins) {
  const std::vector<std::string> targets{"/connectors/relay/in/", "/connectors/relay/in/a/b",
                                         "/connectors/relay/in/a%2Fb", "/connectors/relay/in/" + std::string(129, 'a')};
  for (const auto& target : targets) {
    auto r = http_call(server.port(), "GET", target, {{"Authorization", "Bearer " + server.key()}});
    EXPECT_EQ(r.status, 404) << target << " " << r.body;
    r = http_call(server.port(), "POST", target, {{"Authorization", "Bearer " + server.key()}}, "{}");
    EXPECT_EQ(r.body.find("path_param"), std::string::npos) << target << ": reached the plugin";
  }
}

TEST_F(plugin_http, response_headers_the_host_owns_or_that_could_split_the_response_are_refused_as_malformed) {
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += (i ? "," : "") + std::string("\"X-H") + std::to_string(i) + "\":\"v\"";
  for (const std::string& headers :
       {std::string(R"({"Content-Length":"1"})"), std::string(R"({"transfer-encoding":"chunked"})"),
        std::string(R"({"X-Split":"a\r\nSet-Cookie: stolen=1"})"), std::string(R"({"X-Nul":"a\u0000b"})"),
        std::string(R"({"X Bad Name":"v"})"), std::string(R"({"X-Num":7})"), std::string(R"(["X-A","v"])"),
        std::string(R"({"X-Long":")") + std::string(1025, 'v') + "\"}", "{" + seventeen + "}"}) {
    auto r = http_call(server.port(), "POST", "/connectors/relay/in/x1", {}, "headers:" + headers);
    EXPECT_EQ(r.status, 502) << headers.substr(0, 80) << " " << r.body;
    EXPECT_NE(r.body.find("invalid_plugin_result"), std::string::npos) << r.body;
    EXPECT_EQ(r.headers.count("set-cookie"), 0u);
  }
  // Sixteen plain ones pass.
  std::string sixteen;
  for (int i = 0; i < 16; ++i) sixteen += (i ? "," : "") + std::string("\"X-H") + std::to_string(i) + "\":\"v\"";
  auto r = http_call(server.port(), "POST", "/connectors/relay/in/x1", {}, "headers:{" + sixteen + "}");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["x-h15"], "v");
}

}  // namespace
}  // namespace xconn::test
