// GET /livez and GET /readyz: public probes for an orchestrator that say nothing secret.
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;

TEST(probes, livez_and_readyz_are_public_and_ready_once_every_plugin_serves) {
  server_fixture server;
  server.start();
  auto live = http_get(server.port(), "/livez");
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(live.json(), json::parse(R"({"status":"ok"})"));
  auto ready = http_get(server.port(), "/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(ready.json(), json::parse(R"({"status":"ready","plugins":{"echo":"healthy"}})"));
  EXPECT_EQ(ready.body.find(server.key()), std::string::npos);
  EXPECT_EQ(http_call(server.port(), "POST", "/readyz").status, 405);
}

TEST(probes, readyz_is_503_while_an_allowed_plugin_is_missing) {
  server_fixture server({"echo.so"}, [](config& c) { c.plugins.allow = {"echo", "telegram"}; });
  server.start();
  auto ready = http_get(server.port(), "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_EQ(ready.json(), json::parse(R"({"status":"not_ready","plugins":{"echo":"healthy","telegram":"missing"}})"));
  EXPECT_EQ(http_get(server.port(), "/livez").status, 200);
}

TEST(probes, readyz_is_503_with_no_plugin_at_all) {
  server_fixture server(std::vector<std::string>{});
  server.start();
  auto ready = http_get(server.port(), "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_EQ(ready.json(), json::parse(R"({"status":"not_ready","plugins":{}})"));
}

}  // namespace
}  // namespace xconn::test
