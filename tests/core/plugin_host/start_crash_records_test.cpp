// The memory of a build that killed the process in its start: the marker lives exactly as long as the start, a
// marker left behind becomes a record at the next start-up, and the record refuses that sha256 until deleted.
#include "core/plugin_host/plugin_library.hpp"
#include "core/plugin_host/start_crash_records.hpp"

#include "support/log_capture.hpp"
#include "support/test_support.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace xconn {
namespace {

const std::string crash_sha(64, 'a');
const std::string other_sha(64, 'b');

TEST(start_crash_records, the_marker_lives_while_start_runs_and_only_then) {
  test::temp_dir dir;
  auto marker = dir.path() / ("starting-" + crash_sha);
  {
    start_marker starting(dir.path(), crash_sha, "echo", "/plugins/echo.so");
    ASSERT_TRUE(std::filesystem::exists(marker));
    EXPECT_EQ(test::read_file(marker), "echo\n/plugins/echo.so\n");
    starting.returned();
    EXPECT_FALSE(std::filesystem::exists(marker)) << "gone as soon as start returned";
    starting.returned();
  }
  EXPECT_FALSE(std::filesystem::exists(marker));
  {
    // Destroyed without returned() (an exception unwinding the start): gone too.
    start_marker starting(dir.path(), crash_sha, "echo", "/plugins/echo.so");
    ASSERT_TRUE(std::filesystem::exists(marker));
  }
  EXPECT_FALSE(std::filesystem::exists(marker));
  // A start that returned leaves nothing to collect.
  collect_start_markers(dir.path());
  EXPECT_EQ(crashed_start_refusal(dir.path(), crash_sha), "");
}

TEST(start_crash_records, a_marker_left_behind_becomes_a_record_that_refuses_that_build_only) {
  test::temp_dir dir;
  test::write_file(dir.path() / ("starting-" + crash_sha), "crasher\n/plugins/crasher.so\n");
  // Not markers of a sha256: left alone.
  test::write_file(dir.path() / "starting-short", "x\n");
  test::write_file(dir.path() / ("starting-" + std::string(64, 'G')), "x\n");
  collect_start_markers(dir.path());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ("starting-" + crash_sha)));
  auto record = dir.path() / ("crashed-" + crash_sha);
  EXPECT_TRUE(std::filesystem::exists(record));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "starting-short"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "crashed-short"));

  auto reason = crashed_start_refusal(dir.path(), crash_sha);
  EXPECT_NE(reason.find("crashed the daemon during its start"), std::string::npos) << reason;
  EXPECT_NE(reason.find(record.string()), std::string::npos) << "names the record to delete: " << reason;
  EXPECT_EQ(crashed_start_refusal(dir.path(), other_sha), "");
  // Still refused after another start-up; deleting the record clears it.
  collect_start_markers(dir.path());
  EXPECT_NE(crashed_start_refusal(dir.path(), crash_sha), "");
  std::filesystem::remove(record);
  EXPECT_EQ(crashed_start_refusal(dir.path(), crash_sha), "");
}

TEST(start_crash_records, a_hostile_marker_makes_one_short_log_line) {
  test::temp_dir dir;
  // A first line of 1 MiB, control characters and an escape sequence, no second line.
  test::write_file(dir.path() / ("starting-" + crash_sha), std::string(1 << 20, 'x') + "\x1b[2J\r\0");
  test::write_file(dir.path() / ("starting-" + other_sha), "id\rwith\x1b[31m\nfile\x07\n\n\n");
  std::string text;
  {
    test::log_capture log;
    collect_start_markers(dir.path());
    text = log.text();
  }
  EXPECT_NE(crashed_start_refusal(dir.path(), crash_sha), "");
  EXPECT_NE(crashed_start_refusal(dir.path(), other_sha), "");
  EXPECT_LT(text.size(), 2u * 4096 + 2048) << "the marker is read up to 4 KiB";
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_NE(text.find("plugin id?with?[31m (file file?, sha256 " + other_sha), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

TEST(start_crash_records, the_loader_refuses_a_recorded_build_before_opening_it) {
  test::temp_dir dir;
  auto plugin = test::plugin_dir() / "echo.so";
  auto sha = file_sha256(plugin);
  ASSERT_TRUE(sha);
  auto cache = dir.path() / "plugin-cache";
  std::filesystem::create_directories(cache);
  test::write_file(cache / ("starting-" + *sha), "echo\n" + plugin.string() + "\n");
  collect_start_markers(cache);
  auto refused = load_plugin_library(plugin, cache);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("crashed the daemon during its start"), std::string::npos) << refused.error();
  EXPECT_FALSE(std::filesystem::exists(cache / (*sha + ".so"))) << "never copied, never opened";
  std::filesystem::remove(cache / ("crashed-" + *sha));
  EXPECT_TRUE(load_plugin_library(plugin, cache));
}

TEST(start_crash_records, a_cache_folder_that_cannot_take_the_marker_does_not_stop_the_start) {
  test::temp_dir dir;
  auto missing = dir.path() / "no-such-folder";
  start_marker starting(missing, crash_sha, "echo", "/plugins/echo.so");
  EXPECT_FALSE(std::filesystem::exists(missing));
  collect_start_markers(missing);  // nothing to read: no throw, no record
  EXPECT_EQ(crashed_start_refusal(missing, crash_sha), "");
}

}  // namespace
}  // namespace xconn
