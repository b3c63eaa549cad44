// xconn_host_file_delete (plugin.h, ABI 1.5) called through the C table a real plugin_generation hands its plugin
// (the probe fixture gives it back), over a real LMDB file store: the plugin deletes a file it kept on its own
// channel once; another plugin's file (on that plugin's channel or named with the caller's), its other channel's
// file, an unknown, malformed or NULL ref and a second delete answer -1 and leave every file readable.
#include "core/files/plugin_files.hpp"
#include "core/plugin_host/plugin_generation.hpp"
#include "core/plugin_host/plugin_library.hpp"

#include "support/file_store_fixture.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/strand.hpp>

#include <future>
#include <optional>
#include <string>
#include <thread>

namespace xconn::test {
namespace {

xconn_str c(std::string_view s) { return {s.data(), s.size()}; }

class FileDeleteAbi : public FileStore {
 protected:
  void SetUp() override {
    FileStore::SetUp();
    // probe has cch_p1 and cch_p2, echo has cch_e: the check the server wires from its channel table.
    access_ = std::make_unique<plugin_files>(*files_, [](std::string_view plugin_id, std::string_view channel_id) {
      return plugin_id == (channel_id == "cch_e" ? "echo" : "probe");
    });
    hooks_.files = access_.get();
    auto library = load_plugin_library(fixture_plugin_dir() / "probe.so", cache_.path());
    ASSERT_TRUE(library) << library.error();
    generation_ = std::make_shared<plugin_generation>(*library, connector_section{}, 1, std::weak_ptr<connector>{},
                                                      [](const plugin_generation&, health_state) {}, hooks_, io_, pool_);
    std::string error;
    ASSERT_TRUE(generation_->create(error)) << error;
    api_ = host_table();
    ASSERT_NE(api_, nullptr);
    ASSERT_GE(api_->struct_size, offsetof(xconn_host_api, xconn_host_file_delete) + sizeof(api_->xconn_host_file_delete));
    ASSERT_NE(api_->xconn_host_file_delete, nullptr);
  }
  void TearDown() override {
    generation_.reset();
    pool_.join();
    work_.reset();
    if (io_thread_.joinable()) io_thread_.join();
    FileStore::TearDown();
  }

  // The table the generation created the probe with, from the probe's tool (answered on an I/O thread).
  const xconn_host_api* host_table() {
    io_thread_ = std::thread([this] { io_.run(); });
    std::promise<call_result> answered;
    generation_->call_async(
        "probe_host_api",
        [](const xconn_plugin_api& api, void* instance, xconn_call* call) {
          api.xconn_plugin_on_invoke_tool(instance, call, c("cch_p1"), c("probe_host_api"), c("{}"), c("{}"));
        },
        boost::asio::make_strand(pool_.get_executor()), std::chrono::seconds(10),
        [&answered](call_result r) { answered.set_value(std::move(r)); });
    auto f = answered.get_future();
    if (f.wait_for(std::chrono::seconds(30)) != std::future_status::ready) return nullptr;
    auto r = f.get();
    EXPECT_TRUE(r.ok) << r.code << ": " << r.message;
    auto at = r.json.find("\"host_api\":\"");
    if (!r.ok || at == std::string::npos) return nullptr;
    return reinterpret_cast<const xconn_host_api*>(std::stoull(r.json.substr(at + 12)));
  }

  // A file the probe keeps through the C ABI (begin, write, end with keep); its file_ref.
  std::string kept_by_probe(std::string_view channel, const std::string& bytes) {
    auto* upload = api_->xconn_host_file_begin(api_->host_ctx, c(channel), c("p.bin"), c(""));
    EXPECT_NE(upload, nullptr);
    if (!upload) return {};
    EXPECT_EQ(api_->xconn_host_file_write(upload, bytes.data(), bytes.size()), 0);
    std::promise<std::string> kept;
    api_->xconn_host_file_end(upload, 1, [](void* user, const xconn_file_result* r) {
      std::string ref;
      if (r->status == XCONN_STATUS_OK)
        ref = boost::json::value_to<std::string>(
            boost::json::parse(std::string_view(r->file_json.data, r->file_json.size)).at("file_ref"));
      static_cast<std::promise<std::string>*>(user)->set_value(ref);
    }, &kept);
    auto f = kept.get_future();
    EXPECT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    return f.get();
  }

  int del(std::string_view channel, std::string_view ref) {
    return api_->xconn_host_file_delete(api_->host_ctx, c(channel), c(ref));
  }
  bool readable(std::string_view channel, std::string_view ref) {
    char byte = 0;
    return api_->xconn_host_file_read(api_->host_ctx, c(channel), c(ref), 0, &byte, 1) == 1;
  }

  temp_dir cache_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{io_.get_executor()};
  std::thread io_thread_;
  boost::asio::thread_pool pool_{1};
  plugin_host_hooks hooks_;
  std::unique_ptr<plugin_files> access_;
  std::shared_ptr<plugin_generation> generation_;
  const xconn_host_api* api_ = nullptr;
};

TEST_F(FileDeleteAbi, DeletesOnlyItsOwnKeptFileOnItsChannelOnce) {
  const auto mine = kept_by_probe("cch_p1", random_bytes(2 * file_store::chunk_bytes + 3, 9));
  const auto other_channel = kept_by_probe("cch_p2", "probe's file on its other channel");
  ASSERT_EQ(mine.size(), 37u);
  ASSERT_EQ(other_channel.size(), 37u);
  auto w = files_->begin("echo", "cch_e", "e.bin", "");
  ASSERT_TRUE(w->append("echo's file"));
  auto echo_file = finish_sync(*w);
  ASSERT_TRUE(echo_file && echo_file->has_value());
  const auto echos = (*echo_file)->file_ref;

  EXPECT_EQ(del("cch_e", echos), -1) << "another plugin's file on its channel";
  EXPECT_EQ(del("cch_p1", echos), -1) << "another plugin's file named with the caller's channel";
  EXPECT_EQ(del("cch_p2", mine), -1) << "its own file, named with its other channel";
  EXPECT_EQ(del("cch_e", mine), -1) << "its own file, named with another plugin's channel";
  EXPECT_EQ(del("cch_p1", "file_" + std::string(32, 'a')), -1) << "unknown";
  EXPECT_EQ(del("cch_p1", std::string(70000, 'x')), -1) << "oversized";
  EXPECT_EQ(del("cch_p1", mine + std::string(1, '\0')), -1) << "a trailing NUL";
  EXPECT_EQ(api_->xconn_host_file_delete(api_->host_ctx, {nullptr, 0}, c(mine)), -1);
  EXPECT_EQ(api_->xconn_host_file_delete(api_->host_ctx, c("cch_p1"), {nullptr, 0}), -1);
  EXPECT_TRUE(readable("cch_p1", mine));
  EXPECT_TRUE(readable("cch_p2", other_channel));
  EXPECT_TRUE(files_->find_on("echo", "cch_e", echos));

  EXPECT_EQ(del("cch_p1", mine), 0);
  EXPECT_FALSE(readable("cch_p1", mine)) << "still readable once the delete returned";
  EXPECT_EQ(del("cch_p1", mine), -1) << "a second delete";
  EXPECT_TRUE(gone_everywhere(mine));
  EXPECT_TRUE(readable("cch_p2", other_channel));
  EXPECT_TRUE(files_->find_on("echo", "cch_e", echos));
}

}  // namespace
}  // namespace xconn::test
