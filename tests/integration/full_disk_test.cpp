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
using namespace std::chrono_literals;

const std::string full_disk_key = "xck_full_disk_key_0123456789abcdef";

TEST(full_disk, uploads_answer_507_with_a_log_line_and_a_delete_still_succeeds) {
  temp_dir dir;
  std::filesystem::create_directories(dir.path() / "var");
  // echo alone: every plugin loaded is copied into the store's plugin cache, and sanitized builds are large.
  auto plugins = dir.path() / "plugins";
  std::filesystem::create_directories(plugins);
  std::filesystem::copy_file(plugin_dir() / "echo.so", plugins / "echo.so");
  write_file(dir.path() / "xconnd.yaml", test_daemon_config(plugins));
  daemon_process d({"--mount", "--map-root-user", "sh", "-c",
                    "mount -t tmpfs -o size=64m tmpfs var && exec \"$0\" --config xconnd.yaml",
                    xconnd_path().string()},
                   dir.path(), {{"XCONN_TEST_KEY", full_disk_key}}, "/usr/bin/unshare");
  auto port = d.wait_listening();
  if (port == 0 && (d.console().find("unshare:") != std::string::npos || d.console().find("mount:") != std::string::npos))
    GTEST_SKIP() << "no private mount namespace here: " << d.console();
  ASSERT_NE(port, 0) << d.console();

  std::string channel;
  {
    auto c = dp_client::connect(port, full_disk_key);
    ASSERT_TRUE(c) << d.console();
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
  EXPECT_NE(d.console().find("the disk is full"), std::string::npos) << d.console();
  EXPECT_NE(d.console().find("cannot store"), std::string::npos) << d.console();

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
