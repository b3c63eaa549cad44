// Which keys of a reloaded configuration only a restart applies (core/base/config_diff).
#include "core/base/config_diff.hpp"

#include <gtest/gtest.h>

namespace xconn {
namespace {

config parsed(const std::string& yaml) { return parse_config(yaml).value(); }

TEST(config_diff, the_same_file_changes_nothing) {
  auto text = "server:\n  listen: \"127.0.0.1:0\"\nplugins:\n  allow: [\"echo\"]\n";
  EXPECT_TRUE(restart_only_changes(parsed(text), parsed(text)).empty());
}

TEST(config_diff, names_each_changed_key_of_every_section_in_file_order) {
  auto before = parsed("server:\n  listen: \"127.0.0.1:1\"\n");
  auto after = parsed(
      "server:\n  listen: \"127.0.0.1:2\"\n  api_keys: [\"xck_a_key_long_enough_0123\"]\n"
      "store:\n  sealing_key_file: \"/k\"\nplugins:\n  threads: 8\n  allow: [\"echo\"]\n"
      "leases:\n  connector_offline_s: 60\ndelivery:\n  context_in_text: false\ntools:\n  timeout_s: 5\n"
      "files:\n  upload_grace_s: 5\nlog:\n  format: json\n");
  EXPECT_EQ(restart_only_changes(before, after),
            (std::vector<std::string>{"server.listen", "server.api_keys", "store.sealing_key_file", "plugins.allow",
                                      "plugins.threads", "leases.connector_offline_s", "delivery.context_in_text",
                                      "tools.timeout_s", "files.upload_grace_s", "log.format"}));
}

TEST(config_diff, the_public_body_budget_is_restart_only) {
  auto before = parsed("server:\n  max_public_body_bytes: 1048576\n");
  auto after = parsed("server:\n  max_public_body_bytes: 2097152\n");
  EXPECT_EQ(restart_only_changes(before, after), (std::vector<std::string>{"server.max_public_body_bytes"}));
}

TEST(config_diff, a_plugins_section_is_not_a_restart_only_key) {
  auto before = parsed("connectors:\n  echo:\n    config:\n      sent_log_max: 5\n");
  auto after = parsed("connectors:\n  echo:\n    config:\n      sent_log_max: 6\n");
  EXPECT_TRUE(restart_only_changes(before, after).empty());
}

}  // namespace
}  // namespace xconn
