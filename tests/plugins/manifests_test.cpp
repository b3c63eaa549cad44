// Every plugin's manifest passes the host's own checks (parse_manifest, what the loader runs) when the tests are
// built and run, so a bad manifest fails here and not at a deployment's load. The id must equal the library's name.
#include "core/plugin_host/plugin_manifest.hpp"

#include "echo/echo_manifest.hpp"
#include "example/example_manifest.hpp"
#include "irc/irc_manifest.hpp"
#include "telegram/telegram_manifest.hpp"
#include "webhook/webhook_manifest.hpp"
#include "wechat/wechat_manifest.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <string>

namespace {

// The build facts as XCONN_PLUGIN stamps them (plugin.hpp).
const std::string build_facts = R"({"version":"1.2.3","git_tag":"","git_rev":"0123abc","build_time":"1700000000"})";

void expect_host_accepts(const std::string& manifest, const std::string& id) {
  auto parsed = xconn::parse_manifest(manifest, build_facts);
  ASSERT_TRUE(parsed) << id << ": invalid manifest: " << parsed.error();
  EXPECT_EQ(parsed->id, id) << "the manifest id must equal the library's name";
}

}  // namespace

TEST(PluginManifests, echo_passes_the_host_checks) { expect_host_accepts(echo::manifest_json("1.2.3"), "echo"); }
TEST(PluginManifests, telegram_passes_the_host_checks) {
  expect_host_accepts(telegram::manifest_json("1.2.3"), "telegram");
}
TEST(PluginManifests, irc_passes_the_host_checks) { expect_host_accepts(irc::manifest_json("1.2.3"), "irc"); }
TEST(PluginManifests, webhook_passes_the_host_checks) {
  expect_host_accepts(webhook::manifest_json("1.2.3"), "webhook");
}

TEST(PluginManifests, wechat_passes_the_host_checks) { expect_host_accepts(wechat::manifest_json("1.2.3"), "wechat"); }

TEST(PluginManifests, example_passes_the_host_checks) {
  expect_host_accepts(example::manifest_json("1.2.3"), "example");
}

// The check has teeth: the same manifests, each broken in one field, are refused.
TEST(PluginManifests, a_broken_manifest_is_refused) {
  for (const std::string& good : {echo::manifest_json("1.2.3"), example::manifest_json("1.2.3"),
                                  telegram::manifest_json("1.2.3"), irc::manifest_json("1.2.3"),
                                  webhook::manifest_json("1.2.3"), wechat::manifest_json("1.2.3")}) {
    auto without_card = boost::json::parse(good).as_object();
    without_card.erase("card");
    EXPECT_FALSE(xconn::parse_manifest(boost::json::serialize(without_card), build_facts));
    auto bad_id = boost::json::parse(good).as_object();
    bad_id["id"] = "Not An Id!";
    EXPECT_FALSE(xconn::parse_manifest(boost::json::serialize(bad_id), build_facts));
    EXPECT_FALSE(xconn::parse_manifest(good.substr(0, good.size() / 2), build_facts));
  }
}
