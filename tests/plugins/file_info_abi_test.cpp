// xconn_host_file_info (plugin.h, ABI 1.7) called through the C table a real plugin_generation hands its plugin (the
// probe fixture gives it back), over a real LMDB file store: the plugin learns the stored name, MIME type and size
// of a file of its own channel; another plugin's file (on that plugin's channel or named with the caller's), its
// other channel's file, an unknown, malformed or NULL ref answer -1 without visiting. The SDK's describe_file gives
// the same, and nullopt on a table of 1.6 (which ends before the call).
#include "core/files/plugin_files.hpp"
#include "core/plugin_host/plugin_generation.hpp"
#include "core/plugin_host/plugin_library.hpp"

#include "support/file_store_fixture.hpp"

#include <xconn/host_services.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <string>
#include <thread>

namespace xconn::test::file_info_abi_cases {
namespace {

xconn_str c(std::string_view s) { return {s.data(), s.size()}; }

// What one xconn_host_file_info call visited.
struct visited {
  int visits = 0;
  std::string filename;
  std::string mime_type;
  std::uint64_t byte_size = 0;
};

class FileInfoAbi : public FileStore {
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
    ASSERT_GE(api_->api_minor, 7u);
    ASSERT_GE(api_->struct_size, offsetof(xconn_host_api, xconn_host_file_info) + sizeof(api_->xconn_host_file_info));
    ASSERT_NE(api_->xconn_host_file_info, nullptr);
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
  std::string kept_by_probe(std::string_view channel, std::string_view filename, std::string_view mime,
                            const std::string& bytes) {
    auto* upload = api_->xconn_host_file_begin(api_->host_ctx, c(channel), c(filename), c(mime));
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

  int info(xconn_str channel, xconn_str ref, visited& out) {
    return api_->xconn_host_file_info(api_->host_ctx, channel, ref,
                                      [](void* user, xconn_str filename, xconn_str mime, uint64_t size) {
                                        auto& v = *static_cast<visited*>(user);
                                        ++v.visits;
                                        v.filename.assign(filename.data, filename.size);
                                        v.mime_type.assign(mime.data, mime.size);
                                        v.byte_size = size;
                                      },
                                      &out);
  }
  // -1 and no visit.
  void refused(std::string_view channel, std::string_view ref, const char* why) {
    visited v;
    EXPECT_EQ(info(c(channel), c(ref), v), -1) << why;
    EXPECT_EQ(v.visits, 0) << why;
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

TEST_F(FileInfoAbi, TellsTheStoredNameTypeAndSizeOfItsOwnChannelsFileOnly) {
  const std::string pdf = "%PDF-1.4\n" + random_bytes(2 * file_store::chunk_bytes + 3, 4);
  const auto mine = kept_by_probe("cch_p1", "report.pdf", "application/pdf", pdf);
  const auto other_channel = kept_by_probe("cch_p2", "notes.txt", "text/plain", "probe's other channel");
  ASSERT_EQ(mine.size(), 37u);
  ASSERT_EQ(other_channel.size(), 37u);
  auto w = files_->begin("echo", "cch_e", "e.bin", "application/octet-stream");
  ASSERT_TRUE(w->append("echo's file"));
  auto echo_file = finish_sync(*w);
  ASSERT_TRUE(echo_file && echo_file->has_value());
  const auto echos = (*echo_file)->file_ref;

  visited v;
  ASSERT_EQ(info(c("cch_p1"), c(mine), v), 0);
  EXPECT_EQ(v.visits, 1);
  EXPECT_EQ(v.filename, "report.pdf");
  EXPECT_EQ(v.mime_type, "application/pdf");
  EXPECT_EQ(v.byte_size, pdf.size());
  visited other;
  ASSERT_EQ(info(c("cch_p2"), c(other_channel), other), 0);
  EXPECT_EQ(other.filename, "notes.txt");

  refused("cch_e", echos, "another plugin's file on its channel");
  refused("cch_p1", echos, "another plugin's file named with the caller's channel");
  refused("cch_p2", mine, "its own file, named with its other channel");
  refused("cch_e", mine, "its own file, named with another plugin's channel");
  refused("cch_p1", "file_" + std::string(32, 'a'), "unknown");
  refused("cch_p1", std::string(70000, 'x'), "oversized");
  refused("cch_p1", mine + std::string(1, '\0'), "a trailing NUL");
  visited none;
  EXPECT_EQ(info({nullptr, 0}, c(mine), none), -1);
  EXPECT_EQ(info(c("cch_p1"), {nullptr, 0}, none), -1);
  EXPECT_EQ(api_->xconn_host_file_info(api_->host_ctx, c("cch_p1"), c(mine), nullptr, nullptr), -1);
  EXPECT_EQ(none.visits, 0);

  // Deleted, it is no file any more.
  ASSERT_EQ(api_->xconn_host_file_delete(api_->host_ctx, c("cch_p1"), c(mine)), 0);
  refused("cch_p1", mine, "deleted");
}

TEST_F(FileInfoAbi, TheSdkDescribesThroughTheTableAndNotOnAnOlderHost) {
  const std::string jpeg = "\xFF\xD8\xFF a jpeg";
  const auto mine = kept_by_probe("cch_p1", "photo.jpg", "image/jpeg", jpeg);
  xconn_host_api today = *api_;
  auto stored = xconn::sdk::host(&today).describe_file("cch_p1", mine);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->filename, "photo.jpg");
  EXPECT_EQ(stored->mime_type, "image/jpeg");
  EXPECT_EQ(stored->byte_size, jpeg.size());
  EXPECT_FALSE(xconn::sdk::host(&today).describe_file("cch_p2", mine));

  xconn_host_api older = *api_;  // a 1.6 host's table ends before xconn_host_file_info
  older.struct_size = static_cast<uint32_t>(offsetof(xconn_host_api, xconn_host_file_info));
  older.api_minor = 6;
  EXPECT_FALSE(xconn::sdk::host(&older).can_describe_files());
  EXPECT_FALSE(xconn::sdk::host(&older).describe_file("cch_p1", mine));
}

}  // namespace
}  // namespace xconn::test::file_info_abi_cases
