// The bench tools as users run them: tools/xconn-load against a real xconnd and against bench/ws_ceiling, each a
// child process. Small counts; the counts must add up and nothing may fail. Speed is never asserted here.
#include "support/daemon_process.hpp"
#include "support/test_support.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <signal.h>

namespace xconn::test {
namespace {

// The report xconn-load printed with --json (its last line that is a JSON object).
boost::json::object report_of(const daemon_process& run) {
  const std::string console = run.console();
  auto start = console.rfind("\n{");
  start = start == std::string::npos ? (console.rfind('{', 0) == 0 ? 0 : std::string::npos) : start + 1;
  if (start == std::string::npos) return {};
  boost::system::error_code ec;
  auto value = boost::json::parse(console.substr(start), ec);
  return !ec && value.is_object() ? value.as_object() : boost::json::object{};
}

std::uint64_t count_of(const boost::json::object& report, const char* key) {
  const auto* v = report.if_contains(key);
  return v && v->is_int64() ? static_cast<std::uint64_t>(v->as_int64())
         : v && v->is_uint64() ? v->as_uint64()
                               : ~std::uint64_t{0};
}

class load_tool : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir_.path() / "xconnd.yaml", "server:\n  listen: \"127.0.0.1:0\"\nstore:\n  path: \"./var/xconn\"\n"
                                            "  map_size_bytes: 268435456\nplugins:\n  dir: \"" +
                                                plugin_dir().string() + "\"\n");
  }

  unsigned short start_xconnd() {
    server_ = std::make_unique<daemon_process>(std::vector<std::string>{"--config", "xconnd.yaml"}, dir_.path());
    return server_->wait_listening();
  }

  // Runs xconn-load in the test folder (its default key file is the one xconnd wrote there); the exit code.
  int run_load(const std::vector<std::string>& args) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--json", "--no-progress", "--duration", "60"});
    load_ = std::make_unique<daemon_process>(all, dir_.path(), std::map<std::string, std::string>{},
                                             load_tool_path());
    return load_->wait_exit(std::chrono::seconds(90));
  }

  // Every operation answered, nothing failed, lost or seen twice.
  void expect_clean(const boost::json::object& report, std::uint64_t operations) {
    EXPECT_EQ(count_of(report, "operations"), operations) << load_->console();
    EXPECT_EQ(count_of(report, "errors"), 0u) << load_->console();
    EXPECT_EQ(count_of(report, "unanswered"), 0u) << load_->console();
    EXPECT_EQ(count_of(report, "duplicates"), 0u) << load_->console();
  }

  temp_dir dir_;
  std::unique_ptr<daemon_process> server_, load_;
};

TEST_F(load_tool, invoke_round_trips_against_xconnd_add_up) {
  auto port = start_xconnd();
  ASSERT_NE(port, 0) << server_->console();
  ASSERT_EQ(run_load({"--server", "127.0.0.1:" + std::to_string(port), "--sockets", "2", "--channels", "4",
                      "--inflight", "2", "--count", "120"}),
            0)
      << load_->console();
  auto report = report_of(*load_);
  expect_clean(report, 120);
  // hello per socket, channel.open + auth.start per channel, one tool.invoke per operation; each one answered.
  EXPECT_EQ(count_of(report, "frames_sent"), 2u + 4u * 2 + 120u);
  EXPECT_GE(count_of(report, "frames_received"), count_of(report, "frames_sent"));  // and status pushes
  EXPECT_EQ(report.at("latency_ms").as_object().at("samples").to_number<std::uint64_t>(), 120u);
  // The client's own CPU is measured: a share of the window in (0, 1], and the verdict that goes with it.
  auto cpu = report.at("client_cpu").as_object();
  double share = cpu.at("busiest_thread_share").to_number<double>();
  EXPECT_GT(share, 0.0);
  EXPECT_LE(share, 1.05);  // the two clocks are read a moment apart
  EXPECT_EQ(cpu.at("bottleneck").as_bool(), share >= 0.9);

  // Paced: sent on schedule whatever is unanswered, still every one answered.
  ASSERT_EQ(run_load({"--server", "127.0.0.1:" + std::to_string(port), "--sockets", "3", "--rate", "1000", "--count",
                      "150"}),
            0)
      << load_->console();
  auto paced = report_of(*load_);
  expect_clean(paced, 150);
  EXPECT_EQ(paced.at("rate").to_number<double>(), 1000.0);
}

TEST_F(load_tool, inbound_bursts_are_delivered_once_and_acked) {
  auto port = start_xconnd();
  ASSERT_NE(port, 0) << server_->console();
  ASSERT_EQ(run_load({"--server", "127.0.0.1:" + std::to_string(port), "--scenario", "inbound", "--sockets", "2",
                      "--channels", "4", "--burst", "25", "--count", "400"}),
            0)
      << load_->console();
  auto report = report_of(*load_);
  expect_clean(report, 400);
  EXPECT_EQ(count_of(report, "inbound_acked"), 400u);
}

TEST_F(load_tool, outbound_and_mixed_runs_add_up) {
  auto port = start_xconnd();
  ASSERT_NE(port, 0) << server_->console();
  const std::string server = "127.0.0.1:" + std::to_string(port);
  ASSERT_EQ(run_load({"--server", server, "--scenario", "outbound", "--channels", "2", "--deltas", "3", "--count",
                      "50"}),
            0)
      << load_->console();
  auto outbound = report_of(*load_);
  expect_clean(outbound, 50);
  EXPECT_EQ(count_of(outbound, "frames_sent"), 1u + 2u * 2 + 50u * 4);  // 3 deltas and a final each

  // One channel, so the rotation is exact: 30 of each kind (with more, the count is shared out by timing).
  ASSERT_EQ(run_load({"--server", server, "--scenario", "mixed", "--count", "90"}), 0)
      << load_->console();
  auto mixed = report_of(*load_);
  expect_clean(mixed, 90);
  // echo_send_message makes the far side send one message back, and its operation waits for it: all are acked.
  EXPECT_EQ(count_of(mixed, "inbound_acked"), 30u);
}

TEST_F(load_tool, uploads_and_downloads_move_every_byte_over_http) {
  auto port = start_xconnd();
  ASSERT_NE(port, 0) << server_->console();
  const std::string server = "127.0.0.1:" + std::to_string(port);
  // Not a multiple of the store's 64 KiB chunks, so the last chunk is a short one.
  const std::uint64_t size = 200'000;
  ASSERT_EQ(run_load({"--server", server, "--scenario", "upload", "--sockets", "2", "--file-bytes",
                      std::to_string(size), "--count", "12"}),
            0)
      << load_->console();
  auto uploads = report_of(*load_);
  expect_clean(uploads, 12);
  EXPECT_EQ(count_of(uploads, "file_bytes"), size);
  EXPECT_GT(uploads.at("bytes_per_s").to_number<double>(), 0.0);

  // A download fetches the file its connection uploaded at set-up; a body of any other length is an error.
  ASSERT_EQ(run_load({"--server", server, "--scenario", "download", "--sockets", "2", "--file-bytes",
                      std::to_string(size), "--count", "20"}),
            0)
      << load_->console();
  expect_clean(report_of(*load_), 20);
}

TEST_F(load_tool, the_ceiling_serves_downloads_of_the_asked_size_from_memory) {
  daemon_process ceiling({"--listen", "127.0.0.1:0", "--threads", "1"}, dir_.path(), {}, ws_ceiling_path());
  auto port = ceiling.wait_listening();
  ASSERT_NE(port, 0) << ceiling.console();
  ASSERT_EQ(run_load({"--ceiling", "127.0.0.1:" + std::to_string(port), "--scenario", "download", "--sockets", "2",
                      "--file-bytes", "300001", "--count", "30"}),
            0)
      << load_->console();
  auto report = report_of(*load_);
  expect_clean(report, 30);
  EXPECT_EQ(count_of(report, "frames_received"), 30u);
  ceiling.signal(SIGTERM);
  EXPECT_EQ(ceiling.wait_exit(), 0) << ceiling.console();
}

TEST_F(load_tool, the_ceiling_answers_every_frame_with_one_of_the_same_size) {
  daemon_process ceiling({"--listen", "127.0.0.1:0", "--threads", "1"}, dir_.path(), {}, ws_ceiling_path());
  auto port = ceiling.wait_listening();
  ASSERT_NE(port, 0) << ceiling.console();
  ASSERT_EQ(run_load({"--ceiling", "127.0.0.1:" + std::to_string(port), "--sockets", "3", "--inflight", "4",
                      "--count", "300"}),
            0)
      << load_->console();
  auto report = report_of(*load_);
  expect_clean(report, 300);
  EXPECT_EQ(count_of(report, "frames_sent"), 300u);
  EXPECT_EQ(count_of(report, "frames_received"), 300u);
  ceiling.signal(SIGTERM);
  EXPECT_EQ(ceiling.wait_exit(), 0) << ceiling.console();
}

TEST_F(load_tool, refuses_bad_options_and_a_wrong_key_with_a_clear_message) {
  const std::vector<std::vector<std::string>> bad = {
      {"--server", "10.1.2.3:8840"},            // not loopback
      {"--server", "localhost"},                // no port
      {"--sockets", "0"},                       // out of range
      {"--sockets", "4", "--channels", "2"},    // a socket without a channel
      {"--scenario", "flood"},                  // unknown scenario
      {"--ceiling", "127.0.0.1:1", "--scenario", "inbound"},  // the ceiling only echoes
      {"--scenario", "upload", "--file-bytes", "0"},           // a file of nothing
      {"--scenario", "upload", "--rate", "10"},                // transfers are not paced
      {"--frobnicate"},                         // unknown option
  };
  for (const auto& args : bad) {
    EXPECT_EQ(run_load(args), 2) << args[0] << ": " << load_->console();
    EXPECT_NE(load_->console().find("xconn-load"), std::string::npos) << load_->console();
  }

  auto port = start_xconnd();
  ASSERT_NE(port, 0) << server_->console();
  const std::string planted = "planted-wrong-key-0123456789abcdef";
  EXPECT_EQ(run_load({"--server", "127.0.0.1:" + std::to_string(port), "--key", planted, "--count", "5"}), 1);
  EXPECT_NE(load_->console().find("set-up failed"), std::string::npos) << load_->console();
  EXPECT_EQ(load_->console().find(planted), std::string::npos) << "the key reached the console";
}

}  // namespace
}  // namespace xconn::test
