// The ABI fixture plugins (tests/plugins/fixtures) through the C ABI alone: each breaks, or exercises, one rule
// of the plugin contract.
#include "support/abi_test_host.hpp"
#include "support/echo_instance.hpp"
#include "support/test_support.hpp"

#include <boost/dll/shared_library.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace dll = boost::dll;
namespace json = boost::json;
using namespace std::chrono_literals;
using namespace xconn::test;  // the ABI test host: open_plugin, entry, test_call, the instances

// ---- fixtures ----

std::filesystem::path fixture(std::string_view file) { return xconn::test::fixture_plugin_dir() / file; }

TEST(FixturePlugins, AbiMajor2ReportsMajorTwo) {
  dll::shared_library lib = open_plugin(fixture("abi-major2.so"));
  const xconn_plugin_api* api = entry(lib);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->api_major, 2u);
}

TEST(FixturePlugins, NoEntryLoadsButHasNoEntrySymbol) {
  dll::shared_library lib = open_plugin(fixture("no-entry.so"));
  EXPECT_FALSE(lib.has(XCONN_PLUGIN_ENTRY_SYMBOL));
}

TEST(FixturePlugins, GarbageIsNoLibrary) {
  ASSERT_TRUE(std::filesystem::exists(fixture("garbage.so")));
  EXPECT_THROW(open_plugin(fixture("garbage.so")), std::system_error);
}

TEST(FixturePlugins, BadChatDeclaresAnOverlongTitle) {
  dll::shared_library lib = open_plugin(fixture("bad-chat.so"));
  json::object manifest = json::parse(view(entry(lib)->manifest_json)).as_object();
  EXPECT_EQ(manifest.at("id").as_string(), "bad-chat");
  EXPECT_EQ(manifest.at("chat").at("title").as_string().size(), 200u);
}

TEST(FixturePlugins, EachManifestIdMatchesItsFileName) {
  for (std::string id : {"thrower", "hang", "second"}) {
    dll::shared_library lib = open_plugin(fixture(id + ".so"));
    json::object manifest = json::parse(view(entry(lib)->manifest_json)).as_object();
    EXPECT_EQ(manifest.at("id").as_string(), id);
    EXPECT_EQ(manifest.at("card").at("connector_card_id").as_string(), "im." + id);
    EXPECT_TRUE(manifest.at("skill").as_string().starts_with("---\nname: connector-im-" + id + "\n"));
  }
}

class FixtureInstance : public plugin_instance_test {};

TEST_F(FixtureInstance, ThrowerAnswersThrownErrors) {
  load(fixture("thrower.so"));
  test_call& start = start_call();
  ASSERT_TRUE(host_.wait(start));
  expect_error(start, "plugin_exception", true);
  EXPECT_TRUE(start.result().at("thrown").as_bool());
  EXPECT_EQ(start.result().at("message").as_string(), "boom");
  expect_error(invoke("always_throw", "{}"), "plugin_exception", true);
}

TEST_F(FixtureInstance, HangKeepsStartUntilStop) {
  load(fixture("hang.so"));
  test_call& start = start_call();
  EXPECT_FALSE(host_.done(start));  // start returned without answering
  test_call& stop = host_.new_call();
  api_->xconn_plugin_on_stop(instance_, stop.c_call());
  ASSERT_TRUE(host_.wait(stop));
  ASSERT_TRUE(host_.wait(start));
  expect_error(start, "stopped", true);
}

TEST_F(FixtureInstance, SecondAnswersPing) {
  load(fixture("second.so"));
  test_call& start = start_call();
  ASSERT_TRUE(host_.wait(start));
  test_call& ping = invoke("second_ping", "{}");
  ASSERT_EQ(ping.status, XCONN_STATUS_OK);
  EXPECT_EQ(ping.result(), json::parse(R"({"pong":true})"));
  expect_error(invoke("second_nope", "{}"), "tool_not_found");
}

}  // namespace
