#include "support/server_fixture.hpp"

#include "core/base/log.hpp"

#include <algorithm>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>

namespace xconn::test {

server_fixture::server_fixture(std::vector<std::string> plugins, const std::function<void(config&)>& tweak) {
  auto plugin_folder = dir_.path() / "plugins";
  std::filesystem::create_directories(plugin_folder);
  for (const auto& name : plugins) {
    auto from = std::filesystem::exists(plugin_dir() / name) ? plugin_dir() / name : fixture_plugin_dir() / name;
    std::filesystem::copy_file(from, plugin_folder / name);
  }
  cfg_.server.listen = "127.0.0.1:0";
  cfg_.server.api_keys = {test_api_key};
  cfg_.server.io_threads = 2;
  cfg_.store.path = (dir_.path() / "store").string();
  cfg_.store.map_size_bytes = 64ull << 20;
  cfg_.plugins.dir = plugin_folder.string();
  cfg_.plugins.threads = 2;
  if (tweak) tweak(cfg_);
}

server_fixture::~server_fixture() { stop(); }

void server_fixture::start() {
  srv_ = std::make_unique<xconn::server>(cfg_);
  auto err = srv_->start();
  ASSERT_EQ(err, "");
}

void server_fixture::stop() {
  if (srv_) srv_->stop();
  srv_.reset();
}

std::string schema_violations(const std::string& schema_name, const std::string& json_text) {
  return schema_violations(schema_name, std::vector<std::string>{json_text});
}

std::string schema_violations(const std::string& schema_name, const std::vector<std::string>& json_texts) {
  // A command line has a length limit: a long run of packets is checked a thousand at a time.
  constexpr std::size_t chunk = 1000;
  if (json_texts.size() > chunk) {
    std::string report;
    for (std::size_t first = 0; first < json_texts.size(); first += chunk) {
      auto last = std::min(json_texts.size(), first + chunk);
      report += schema_violations(schema_name, std::vector<std::string>(json_texts.begin() + static_cast<std::ptrdiff_t>(first),
                                                                        json_texts.begin() + static_cast<std::ptrdiff_t>(last)));
    }
    return report;
  }
  if (json_texts.empty()) return "";
  temp_dir tmp;
  auto schemas = source_dir() / "tests" / "schemas";
  auto schema = schemas / (schema_name + ".json");
  if (!std::filesystem::exists(schema)) return "schema not found: " + schema.string();
  std::string cmd = std::string(XCONN_TEST_PYTHON) + " " + (schemas / "schema_check.py").string() + " " + schema.string();
  for (std::size_t i = 0; i < json_texts.size(); ++i) {
    auto doc = tmp.path() / ("doc" + std::to_string(i) + ".json");
    write_file(doc, json_texts[i]);
    cmd += " " + doc.string();
  }
  cmd += " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "cannot run the schema checker";
  std::array<char, 4096> buf{};
  while (auto n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int rc = pclose(p);
  if (rc == 0) return "";
  // Name the offending documents by their text, not by a temp path that is gone.
  std::string report = out.empty() ? "schema checker failed" : out;
  for (std::size_t i = 0; i < json_texts.size(); ++i) {
    auto name = "doc" + std::to_string(i) + ".json:";
    if (out.find(name) != std::string::npos) report += "\n" + name + " " + json_texts[i].substr(0, 600);
  }
  return report;
}

}  // namespace xconn::test
