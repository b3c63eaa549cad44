// A full disk (docs/security.md, "Full disk"): the daemon runs on a 64 MiB tmpfs of its own (a private mount
// namespace, so no root is needed). Uploads that do not fit answer 507 with a log line; the store's reserve is
// released, so a DELETE still commits (204, never 404) while further uploads keep answering 507.
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/files_helpers.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string full_disk_key = "xck_full_disk_key_0123456789abcdef";

TEST(full_disk, uploads_answer_507_with_a_log_line_and_a_delete_still_succeeds) {
  temp_dir dir;
  std::filesystem::create_directories(dir.path() / "var");
  // echo alone: every plugin loaded is copied into the store's plugin cache, and sanitized builds are large.
  auto plugins = echo_alone_in(dir.path());
  write_file(dir.path() / "xconnd.yaml", test_daemon_config(plugins));
  daemon_process d({"--mount", "--map-root-user", "sh", "-c",
                    "mount -t tmpfs -o size=64m tmpfs var && exec \"$0\" --config xconnd.yaml",
                    xconnd_path().string()},
                   dir.path(), {{"XCONN_TEST_KEY", full_disk_key}}, "/usr/bin/unshare");
  auto port = d.wait_listening();
  if (port == 0 && (d.console().find("unshare:") != std::string::npos || d.console().find("mount:") != std::string::npos))
    GTEST_SKIP() << "no private mount namespace here: " << d.console();
  ASSERT_NE(port, 0) << d.console();

  std::string channel, connector_id;
  {
    auto c = dp_client::connect(port, full_disk_key);
    ASSERT_TRUE(c) << d.console();
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
  }
  std::map<std::string, std::string> h{{"Authorization", "Bearer " + full_disk_key},
                                       {"X-XAgent-Connector-Channel-ID", channel},
                                       {"Content-Type", multipart_type()}};
  auto upload = [&](std::size_t bytes) { return http_call(port, "POST", uploads, h, multipart({file_part(random_bytes(bytes), "f.bin")})); };

  // 2 MiB files until the disk is full (64 MiB less the 16 MiB reserve and echo's copy: at most two dozen).
  std::vector<std::string> stored;
  http_reply refused;
  for (int i = 0; i < 64 && refused.status == 0; ++i) {
    auto r = upload(2 << 20);
    if (r.status == 201)
      stored.push_back(jstr(r.json().as_object(), "file_ref"));
    else
      refused = r;
  }
  ASSERT_FALSE(stored.empty());
  ASSERT_EQ(refused.status, 507) << refused.body;
  EXPECT_NE(refused.body.find("store_failed"), std::string::npos) << refused.body;
  // The log lines may reach the console a moment after the answer (the reader of the daemon's pipe runs apart).
  auto logged = [&](const std::string& text) {
    return wait_until([&] { return d.console().find(text) != std::string::npos; }, std::chrono::seconds(5));
  };
  EXPECT_TRUE(logged("the disk is full")) << d.console();
  EXPECT_TRUE(logged("cannot store")) << d.console();

  // A new connector_id cannot be recorded now (its hello is refused, store_failed), a known one resumes: its agent
  // can still ack and delete, which is what makes room.
  EXPECT_FALSE(dp_client::connect(port, full_disk_key));
  EXPECT_TRUE(logged("cannot record a new connector_id")) << d.console();
  // A first sign-in the plugin accepts while the store cannot commit is not kept: `failed` with store_failed, the
  // channel still signed out, and echo told to sign it out again (both sides agree).
  {
    auto c = dp_client::connect(port, full_disk_key, "echo", {{"connector_id", connector_id}});
    ASSERT_TRUE(c) << d.console();
    auto id = c->open();
    ASSERT_FALSE(id.empty());
    auto status_of = [&] {
      auto descriptor = c->get_descriptor(id);
      return descriptor ? text_of(descriptor_in(*descriptor)["connection"].as_object(), "status") : "no answer";
    };
    const auto before = status_of();
    auto ack = c->auth_start(id, "echo_token", json::object{{"token", "full-disk-sign-in"}});
    ASSERT_TRUE(ack) << d.console();
    EXPECT_EQ(ack->at("type"), "auth.start.ack") << json::serialize(*ack);
    EXPECT_EQ(text_of(payload_of(*ack), "status"), "failed") << json::serialize(*ack);
    EXPECT_FALSE(payload_of(*ack).contains("connection_descriptor"));
    EXPECT_EQ(error_code(*ack), "store_failed") << json::serialize(*ack);
    EXPECT_TRUE(wait_until([&] { return d.console().find("channel " + id + " signed out") != std::string::npos; }))
        << d.console();
    EXPECT_EQ(status_of(), before);
    auto tool = c->invoke(id, "echo_reverse", {{"text", "abc"}});
    ASSERT_TRUE(tool);
    EXPECT_EQ(error_code(*tool), "connection_not_authenticated") << json::serialize(*tool);
  }

  // Deleting works on the full disk; the file is gone.
  auto auth = std::map<std::string, std::string>{{"Authorization", "Bearer " + full_disk_key}};
  EXPECT_EQ(http_call(port, "DELETE", refs(stored.front()), auth).status, 204) << d.console();
  EXPECT_EQ(http_call(port, "GET", refs(stored.front()), auth).status, 404);
  EXPECT_EQ(http_call(port, "GET", refs(stored.back()), auth).status, 200);
  // Until the reserve's size is free again, what adds data is refused at once, and deletes keep working.
  EXPECT_EQ(upload(1024).status, 507);
  EXPECT_EQ(http_call(port, "DELETE", refs(stored.back()), auth).status, 204);
  EXPECT_EQ(http_get(port, "/connectors/echo/health", full_disk_key).status, 200);

  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0) << d.console();
}

}  // namespace
}  // namespace xconn::test
