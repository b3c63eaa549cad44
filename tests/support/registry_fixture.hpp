// A real connector_registry over a temp plugin folder: the named plugins copied in, loaded at SetUp and running on
// an io thread of its own and a pool of two; TearDown stops the plugins and joins both.
#pragma once

#include "core/plugin_host/connector_registry.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace xconn::test {

class registry_fixture : public ::testing::Test {
 protected:
  // fixture_plugins: file names in build/test-plugins; plugins: file names in build/plugins.
  explicit registry_fixture(std::vector<std::string> fixture_plugins, std::vector<std::string> plugins = {})
      : fixture_plugins_(std::move(fixture_plugins)), plugins_(std::move(plugins)) {}

  void SetUp() override {
    std::filesystem::create_directories(dir.path() / "plugins");
    for (const auto& name : fixture_plugins_)
      std::filesystem::copy_file(fixture_plugin_dir() / name, dir.path() / "plugins" / name);
    for (const auto& name : plugins_)
      std::filesystem::copy_file(plugin_dir() / name, dir.path() / "plugins" / name);
    cfg.plugins.dir = (dir.path() / "plugins").string();
    cfg.store.path = (dir.path() / "store").string();
    registry = std::make_unique<connector_registry>(cfg, io, pool);
    registry->load_all();
    io_thread = std::thread([this] { io.run(); });
  }
  void TearDown() override {
    registry->stop_all();
    work.reset();
    io.stop();
    io_thread.join();
    pool.join();
    registry.reset();
  }

  std::vector<std::string> fixture_plugins_;
  std::vector<std::string> plugins_;
  temp_dir dir;
  config cfg;
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  boost::asio::thread_pool pool{2};
  std::unique_ptr<connector_registry> registry;
  std::thread io_thread;
};

}  // namespace xconn::test
