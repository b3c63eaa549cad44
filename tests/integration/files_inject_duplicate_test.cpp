// echo's /inject with a msg_id the host already holds (answered 202 duplicate) deletes the file it stored for it
// (ABI 1.5 xconn_host_file_delete): the store keeps exactly the first message's file, which still downloads, also
// after a restart, and no chunk of the second's is left. Before, the duplicate's file stayed for files.ttl_s.
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include "core/files/file_store.hpp"
#include "core/store/store.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>

namespace xconn::test {
namespace {
namespace json = boost::json;

class FilesInjectDuplicate : public Files {
 protected:
  static json::object item(const std::string& name, const std::string& bytes) {
    return json::object{{"filename", name}, {"mime_type", "text/plain"}, {"content_base64", base64(bytes)}};
  }

  // The file records (by ref) and the refs that own chunks, read with the server stopped (its writes committed).
  std::pair<std::map<std::string, std::string>, std::set<std::string>> stored() {
    auto path = server.cfg().store.path;
    dp.reset();
    server.stop();
    std::map<std::string, std::string> records;
    std::set<std::string> chunk_owners;
    auto db = store::open({path, 1ull << 30, {std::string(file_store::files_db), std::string(file_store::chunks_db)}});
    EXPECT_TRUE(db) << db.error();
    if (!db) return {};
    (*db)->scan(file_store::files_db, "", [&](std::string_view ref, std::string_view record) {
      records.emplace(ref, record);
      return true;
    });
    (*db)->scan(file_store::chunks_db, "", [&](std::string_view key, std::string_view) {
      chunk_owners.emplace(key.substr(0, key.find('/')));
      return true;
    });
    return {records, chunk_owners};
  }
};

TEST_F(FilesInjectDuplicate, the_duplicates_file_is_deleted_and_the_firsts_still_downloads) {
  const std::string first_bytes(3 * file_store::chunk_bytes + 11, 'f');  // several chunks, so a leftover shows
  auto first = inject(channel, {{"text", "one"}, {"msg_id", "dup-1"}, {"files", json::array{item("first.txt", first_bytes)}}});
  ASSERT_EQ(first.status, 202) << first.body;
  EXPECT_EQ(first.json().at("duplicate"), false) << first.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  ASSERT_EQ(p.at("files").as_array().size(), 1u);
  const auto first_ref = jstr(p.at("files").as_array()[0].as_object(), "file_ref");

  auto again = inject(channel, {{"text", "one, retried"},
                                {"msg_id", "dup-1"},
                                {"files", json::array{item("second.txt", std::string(2 * file_store::chunk_bytes, 's'))}}});
  ASSERT_EQ(again.status, 202) << again.body;
  EXPECT_EQ(again.json().at("duplicate"), true) << again.body;

  // Every retry's file goes, not only the first retry's.
  constexpr int retries = 10;
  auto began = std::chrono::steady_clock::now();
  for (int i = 0; i < retries; ++i) {
    auto r = inject(channel, {{"text", "one, retried"},
                              {"msg_id", "dup-1"},
                              {"files", json::array{item("retry.txt", std::string(256 * 1024, static_cast<char>('a' + i)))}}});
    ASSERT_EQ(r.status, 202) << r.body;
    EXPECT_EQ(r.json().at("duplicate"), true) << r.body;
  }
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
  RecordProperty("duplicate_injects_ms", static_cast<int>(took.count()));

  auto got = get_with_key(first_ref);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, first_bytes) << "the first message's file is untouched";

  auto [records, chunk_owners] = stored();
  EXPECT_EQ(records.size(), 1u) << "a duplicate's file stayed";
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.begin()->first, first_ref);
  EXPECT_NE(records.begin()->second.find("first.txt"), std::string::npos) << records.begin()->second;
  EXPECT_EQ(chunk_owners, std::set<std::string>{first_ref}) << "chunks of the deleted file are left";

  // A restart reads the same store: the first file still downloads, nothing else came back.
  server.start();
  got = get_with_key(first_ref);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, first_bytes);
}

}  // namespace
}  // namespace xconn::test
