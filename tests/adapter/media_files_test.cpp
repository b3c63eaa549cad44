// The host's file store through media_files.hpp against a real host table: a channel's file read whole (across
// several reads) with the host's stored name and type filling what the caller did not know, refused past the cap
// or when it is not the channel's, and the file_ref of a stored file (or "" when the store refused it).
#include <xconn/adapter/media_files.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>


namespace {

using namespace xconn;

// A host table with one file, "f1" of channel "c1", of `size` bytes.
struct file_host {
  static inline std::string content;
  xconn_host_api api{};
  explicit file_host(std::size_t size, bool describes = true) {
    content.assign(size, 'x');
    api.struct_size = describes ? sizeof(xconn_host_api) : offsetof(xconn_host_api, xconn_host_file_info);
    api.api_major = XCONN_PLUGIN_API_MAJOR;
    api.api_minor = XCONN_PLUGIN_API_MINOR;
    api.xconn_host_file_read = [](void*, xconn_str channel, xconn_str ref, uint64_t offset, void* out,
                                  size_t capacity) -> int64_t {
      if (sdk::from_c(channel) != "c1" || sdk::from_c(ref) != "f1") return -1;
      auto n = std::min<std::size_t>(capacity, content.size() - std::min<std::size_t>(offset, content.size()));
      std::memcpy(out, content.data() + offset, n);
      return static_cast<int64_t>(n);
    };
    api.xconn_host_file_info = [](void*, xconn_str channel, xconn_str ref, xconn_file_info_visit visit,
                                  void* user) -> int {
      if (sdk::from_c(channel) != "c1" || sdk::from_c(ref) != "f1") return -1;
      visit(user, sdk::to_c("report.pdf"), sdk::to_c("application/pdf"), content.size());
      return 0;
    };
  }
  sdk::host host() const { return sdk::host(&api); }
};

TEST(MediaFiles, ReadsAChannelsFileWholeWithTheStoredNameAndType) {
  file_host h(200 * 1024);  // more than one read of 64 KiB
  auto file = adapter::read_channel_file(h.host(), "c1", "f1", 1 << 20);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->bytes, file_host::content);
  EXPECT_EQ(file->filename, "report.pdf");
  EXPECT_EQ(file->mime_type, "application/pdf");
}

TEST(MediaFiles, WhatTheCallerKnowsWins) {
  file_host h(10);
  auto file = adapter::read_channel_file(h.host(), "c1", "f1", 100, "given.txt", "text/plain");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->filename, "given.txt");
  EXPECT_EQ(file->mime_type, "text/plain");
}

TEST(MediaFiles, AnOlderHostLeavesTheNamingToTheAdapter) {
  file_host h(10, false);
  auto file = adapter::read_channel_file(h.host(), "c1", "f1", 100);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->bytes.size(), 10u);
  EXPECT_EQ(file->filename, "");
  EXPECT_EQ(file->mime_type, "");
}

TEST(MediaFiles, AnotherChannelsFileOrOnePastTheCapIsNotRead) {
  file_host h(1000);
  EXPECT_FALSE(adapter::read_channel_file(h.host(), "c2", "f1", 1 << 20));
  EXPECT_FALSE(adapter::read_channel_file(h.host(), "c1", "nope", 1 << 20));
  EXPECT_FALSE(adapter::read_channel_file(h.host(), "c1", "f1", 999));
  EXPECT_TRUE(adapter::read_channel_file(h.host(), "c1", "f1", 1000));
}

TEST(MediaFiles, TheFileRefOfAStoredFile) {
  sdk::file_result stored{true, R"({"file_ref":"fr_1","type":"file","filename":"a.jpg"})", {}};
  EXPECT_EQ(adapter::stored_file_ref(stored), "fr_1");
  stored.ok = false;
  EXPECT_EQ(adapter::stored_file_ref(stored), "");
  EXPECT_EQ(adapter::stored_file_ref({true, "not json", {}}), "");
  EXPECT_EQ(adapter::stored_file_ref({true, R"({"file_ref":7})", {}}), "");
}

}  // namespace
