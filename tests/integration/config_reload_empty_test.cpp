// A reload of a configuration file left with no settings (emptied, whitespace, only comments, {}) is refused
// as config_invalid, by POST /admin/reload and by SIGHUP alike: the running configuration and every plugin's
// section stay, where applying it would have put every key back to its default (docs/operations.md).
#include "support/daemon_process.hpp"
#include "support/files_helpers.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <signal.h>

#include <string>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string reload_key = "xck_reload_empty_key_0123456789abcdef";

std::map<std::string, std::string> reload_auth() { return {{"Authorization", "Bearer " + reload_key}}; }

json::object echo_listing(unsigned short port) {
  auto list = http_get(port, "/connectors", reload_key).json();
  if (!list.is_object()) return {};
  for (const auto& c : list.at("connectors").as_array())
    if (c.at("plugin_id") == "echo") return c.as_object();
  return {};
}

std::string config_digest_of(const json::object& entry) {
  auto it = entry.find("config_digest");
  return it != entry.end() && it->value().is_string() ? std::string(it->value().as_string()) : "";
}

std::size_t times_in(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

struct daemon_with_echo_section {
  temp_dir dir;
  std::unique_ptr<daemon_process> d;
  unsigned short port = 0;

  std::filesystem::path file() const { return dir.path() / "xconnd.yaml"; }
  void write_config(const std::string& sent_log_max) {
    write_file(file(), test_daemon_config(plugin_dir(), "  watch: false\nconnectors:\n  echo:\n    config:\n"
                                                        "      sent_log_max: " + sent_log_max + "\n"));
  }
};

TEST(config_reload_empty, a_file_without_settings_is_refused_and_the_running_config_stays) {
  daemon_with_echo_section r;
  r.write_config("100");
  r.d = start_test_daemon(r.dir.path(), reload_key, r.port);
  ASSERT_NE(r.port, 0);
  auto before = echo_listing(r.port);
  ASSERT_FALSE(config_digest_of(before).empty()) << json::serialize(before);

  int refused = 0;
  for (const char* text : {"", " \n\t\n\n", "# server:\n#   listen: 127.0.0.1:9\n", "---\n", "{}\n"}) {
    write_file(r.file(), text);
    auto reply = http_call(r.port, "POST", "/admin/reload", reload_auth());
    ++refused;
    EXPECT_EQ(reply.status, 422) << "'" << text << "': " << reply.body;
    EXPECT_EQ(error_of(reply), "config_invalid") << reply.body;
    EXPECT_NE(reply.body.find("xconnd.yaml: no settings"), std::string::npos) << reply.body;
  }
  // A plugin's own reload reads the same file: refused too.
  EXPECT_EQ(http_call(r.port, "POST", "/connectors/echo/reload", reload_auth()).status, 422);
  ++refused;

  // SIGHUP: the same refusal, logged; nothing reloads.
  write_file(r.file(), "# everything commented out\n");
  auto logged = times_in(r.d->console(), "no settings");
  r.d->signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return times_in(r.d->console(), "no settings") > logged; }, 10s)) << r.d->console();
  ++refused;
  auto metrics = http_get(r.port, "/metrics", reload_key).body;
  EXPECT_NE(metrics.find("xconn_config_reloads_total{outcome=\"invalid\"} " + std::to_string(refused)),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find("xconn_config_last_reload_success 0"), std::string::npos);
  EXPECT_NE(metrics.find("xconn_config_reloads_total{outcome=\"applied\"} 0"), std::string::npos) << metrics;

  auto after = echo_listing(r.port);
  EXPECT_EQ(after.at("generation"), before.at("generation")) << "echo was not reloaded with an absent section";
  EXPECT_EQ(config_digest_of(after), config_digest_of(before));
  EXPECT_EQ(http_get(r.port, "/connectors/echo/health", reload_key).status, 200);

  // A file with settings again reloads as usual: the refusals are not remembered.
  r.write_config("200");
  auto ok = http_call(r.port, "POST", "/admin/reload", reload_auth());
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.json().at("status"), "applied");
  EXPECT_TRUE(wait_until([&] { return config_digest_of(echo_listing(r.port)) != config_digest_of(before); }, 20s)) << r.d->console();
}

}  // namespace
}  // namespace xconn::test
