// The example adapter's manifest (plugins/example/example_manifest.hpp) passes the host's own checks, names the
// library, and declares the password as the one secret field (the host keeps it sealed and hands it back at restore).
#include "core/plugin_host/plugin_manifest.hpp"

#include "example/example_manifest.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace example_manifest_cases {

TEST(ExampleManifest, passes_the_host_checks_with_the_library_name_and_one_secret_field) {
  auto manifest = example::manifest_json("1.2.3");
  auto parsed = xconn::parse_manifest(
      manifest, R"({"version":"1.2.3","git_tag":"","git_rev":"0123abc","build_time":"1700000000"})");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->id, "example");
  auto card = boost::json::parse(manifest).at("card").as_object();
  ASSERT_TRUE(card.contains("tools"));  // the host builds descriptors from the card's tools, even none
  std::vector<std::string> secret;
  for (const auto& f : card.at("auth_flows").at(0).at("fields").as_array())
    if (f.as_object().contains("secret")) secret.emplace_back(f.at("name").as_string());
  EXPECT_EQ(secret, std::vector<std::string>{"password"});
}

}  // namespace example_manifest_cases
