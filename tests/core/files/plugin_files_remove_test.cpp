// plugin_files::remove (plugin.h xconn_host_file_delete) over a real LMDB file store: a plugin deletes only a kept
// file of its own channel. Another plugin's file, another channel's, an unknown or malformed ref, one still being
// written and a second delete are each refused (-1) and leave every stored file whole; the deleted one is gone for
// reads and from both databases.
#include "core/files/plugin_files.hpp"

#include "support/file_store_fixture.hpp"

#include <gtest/gtest.h>

#include <string>

namespace xconn::test {
namespace {

class PluginFilesRemove : public FileStore {
 protected:
  // The channel check the server wires: cch_a and cch_b are echo's, cch_t is telegram's.
  plugin_files access() {
    return plugin_files(*files_, [](std::string_view plugin_id, std::string_view channel_id) {
      return plugin_id == (channel_id == "cch_t" ? "telegram" : "echo");
    });
  }

  stored_file kept_by(const std::string& plugin, const std::string& channel, const std::string& data) {
    auto w = files_->begin(plugin, channel, "f.bin", "");
    EXPECT_TRUE(w->append(data));
    auto r = finish_sync(*w);
    EXPECT_TRUE(r && r->has_value());
    return r && r->has_value() ? **r : stored_file{};
  }

  bool readable(plugin_files& a, const stored_file& f) {
    char byte = 0;
    return a.read(f.plugin_id, f.channel_id, f.file_ref, 0, &byte, 1) == 1;
  }
};

TEST_F(PluginFilesRemove, DeletesOnlyAKeptFileOfThePluginsOwnChannelOnce) {
  auto a = access();
  const auto mine = kept_by("echo", "cch_a", random_bytes(3 * file_store::chunk_bytes + 5, 1));
  const auto sibling = kept_by("echo", "cch_a", "the other file of the channel");
  const auto other_channel = kept_by("echo", "cch_b", "echo's file on another channel");
  const auto other_plugin = kept_by("telegram", "cch_t", "telegram's file");

  // Not the plugin's or not the channel's: refused, and the file stays readable by its owner.
  EXPECT_EQ(a.remove("telegram", "cch_a", mine.file_ref), -1) << "another plugin named echo's channel";
  EXPECT_EQ(a.remove("telegram", "cch_t", mine.file_ref), -1) << "another plugin, on its own channel";
  EXPECT_EQ(a.remove("echo", "cch_b", mine.file_ref), -1) << "the plugin's other channel";
  EXPECT_EQ(a.remove("echo", "cch_a", other_channel.file_ref), -1);
  EXPECT_EQ(a.remove("echo", "cch_a", other_plugin.file_ref), -1);
  EXPECT_EQ(a.remove("echo", "cch_t", other_plugin.file_ref), -1) << "a channel of another plugin";
  // Unknown, malformed and hostile refs name no file.
  EXPECT_EQ(a.remove("echo", "cch_a", "file_" + std::string(32, '0')), -1);
  for (const std::string& ref : {std::string(), std::string("file_"), mine.file_ref + "0", mine.file_ref.substr(1),
                                std::string(mine.file_ref).append(1, '\0'), std::string(1 << 20, 'f'),
                                std::string("../") + mine.file_ref, std::string("cch_a/") + mine.file_ref})
    EXPECT_EQ(a.remove("echo", "cch_a", ref), -1) << ref.substr(0, 64);
  for (const auto* f : {&mine, &sibling, &other_channel, &other_plugin}) EXPECT_TRUE(readable(a, *f)) << f->file_ref;

  EXPECT_EQ(a.remove("echo", "cch_a", mine.file_ref), 0);
  EXPECT_FALSE(files_->find(mine.file_ref));
  char byte = 0;
  EXPECT_EQ(a.read("echo", "cch_a", mine.file_ref, 0, &byte, 1), -1) << "gone for reads once remove returned";
  EXPECT_TRUE(gone_everywhere(mine.file_ref)) << "its record or chunks stayed";
  EXPECT_EQ(a.remove("echo", "cch_a", mine.file_ref), -1) << "a second delete";
  for (const auto* f : {&sibling, &other_channel, &other_plugin}) EXPECT_TRUE(readable(a, *f)) << f->file_ref;
}

TEST_F(PluginFilesRemove, RefusesAFileStillBeingWrittenAndOneExpired) {
  auto a = access();
  auto* upload = a.begin("echo", "cch_a", "late.bin", "");
  ASSERT_NE(upload, nullptr);
  ASSERT_TRUE(a.write(*upload, random_bytes(2 * file_store::chunk_bytes, 3)));
  EXPECT_EQ(a.remove("echo", "cch_a", upload->writer->file_ref()), -1) << "not kept yet: its end decides";
  std::promise<finish_result> finished;
  a.end(upload, true, [&](finish_result r) { finished.set_value(std::move(r)); });
  auto f = finished.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto kept = f.get();
  ASSERT_TRUE(kept) << kept.error();
  EXPECT_TRUE(readable(a, *kept)) << "the refused delete left the upload whole";

  now_ += static_cast<long long>(cfg_.ttl_s) * 1000 + 1;
  EXPECT_EQ(a.remove("echo", "cch_a", kept->file_ref), -1) << "expired: the collector's, as for reads";
}

}  // namespace
}  // namespace xconn::test
