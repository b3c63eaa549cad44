// The C++ SDK's defaults are the host's: a hook the plugin class does not override leaves its C slot NULL, so the
// host answers for it (a final fails with not_supported) and refuses a manifest that declares a feature without its
// hook. Real fixture .so files (tests/plugins/fixtures/partial.cpp), loaded by the real loader and registry.
#include "core/plugin_host/connector_registry.hpp"
#include "core/plugin_host/plugin_library.hpp"

#include "support/registry_fixture.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <future>

namespace xconn::test {
namespace {

TEST(SdkDefaults, only_overridden_hooks_fill_their_slots) {
  temp_dir cache;
  auto lib = load_plugin_library(fixture_plugin_dir() / "partial.so", cache.path());
  ASSERT_TRUE(lib) << lib.error();
  const xconn_plugin_api& t = (*lib)->table;
  EXPECT_NE(t.xconn_plugin_on_invoke_tool, nullptr);
  EXPECT_NE(t.xconn_plugin_on_start, nullptr);  // Required: always filled
  EXPECT_NE(t.xconn_plugin_on_stop, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_send, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_update, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_activity, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_http, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_http_request, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_auth_start, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_auth_status, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_auth_cancel, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_auth_logout, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_consumer_stop, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_channel_restore, nullptr);
  EXPECT_EQ(t.xconn_plugin_on_channel_end, nullptr);
}

TEST(SdkDefaults, a_feature_without_its_hook_is_refused_at_load) {
  temp_dir cache;
  auto lib = load_plugin_library(fixture_plugin_dir() / "partial-typing.so", cache.path());
  ASSERT_FALSE(lib);
  EXPECT_EQ(lib.error(), "the manifest declares delivery.typing but the plugin table has no on_activity");
}

// The real plugins keep the hooks their manifests' features need, and echo still sends.
TEST(SdkDefaults, the_real_plugins_still_load) {
  temp_dir cache;
  for (const char* name : {"echo.so", "telegram.so", "irc.so", "webhook.so"}) {
    auto lib = load_plugin_library(plugin_dir() / name, cache.path());
    ASSERT_TRUE(lib) << name << ": " << lib.error();
    EXPECT_NE((*lib)->table.xconn_plugin_on_send, nullptr) << name;
  }
}

class sdk_defaults_host : public registry_fixture {
 protected:
  sdk_defaults_host() : registry_fixture({"partial.so", "partial-typing.so"}) {}
};

TEST_F(sdk_defaults_host, a_final_to_a_plugin_without_send_is_not_supported) {
  auto conn = registry->find("partial");
  ASSERT_TRUE(conn);
  std::promise<call_result> done;
  auto future = done.get_future();
  conn->send("cch_test", R"({"idempotency_key":"m1","text":"hi"})", conn->make_strand(), std::chrono::seconds(5),
             [&](call_result r) { done.set_value(std::move(r)); });
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto r = future.get();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.code, "not_supported");  // the host's answer, not the SDK's old send_not_supported
  EXPECT_FALSE(r.retryable);

  bool typing_refused = false;
  for (const auto& refused : registry->refused())
    if (refused.plugin_id == "partial-typing") {
      typing_refused = true;
      EXPECT_NE(refused.reason.find("delivery.typing"), std::string::npos) << refused.reason;
    }
  EXPECT_TRUE(typing_refused);
  EXPECT_FALSE(registry->find("partial-typing"));
}

}  // namespace
}  // namespace xconn::test
