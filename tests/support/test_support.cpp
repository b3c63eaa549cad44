#include "support/test_support.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace xconn::test {

temp_dir::temp_dir() {
  std::random_device rd;
  auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = base / ("xconn-test-" + std::to_string(rd()) + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temp dir");
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

unsigned short free_loopback_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return probe.local_endpoint().port();
}

std::filesystem::path plugin_dir() { return XCONN_TEST_PLUGIN_DIR; }
std::filesystem::path fixture_plugin_dir() { return XCONN_TEST_FIXTURE_DIR; }
std::filesystem::path xconnd_path() { return XCONN_TEST_XCONND; }
std::filesystem::path load_tool_path() { return XCONN_TEST_LOAD_TOOL; }
std::filesystem::path ws_ceiling_path() { return XCONN_TEST_WS_CEILING; }
std::filesystem::path source_dir() { return XCONN_TEST_SOURCE_DIR; }

}  // namespace xconn::test
