// echo's /inject stores its attachments all or none: one that fails (here over files.max_bytes) discards those
// written before it, so no file waits for files.ttl_s with no message naming it, and the msg_id stays free.
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include "core/files/file_store.hpp"
#include "core/store/store.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace xconn::test {
namespace {
namespace json = boost::json;

constexpr std::size_t inject_max_bytes = 4096;  // files.max_bytes of FilesInjectSmall

class FilesInjectSmall : public Files {
 protected:
  FilesInjectSmall() : Files([](config& c) { c.files.max_bytes = inject_max_bytes; }) {}

  static json::object item(const std::string& name, std::size_t size) {
    return json::object{{"filename", name},
                        {"mime_type", "application/octet-stream"},
                        {"content_base64", base64(std::string(size, 'x'))}};
  }

  // The file records in the store, read after the server stopped (every queued write committed by then).
  std::vector<std::string> stored_records() {
    auto path = server.cfg().store.path;
    dp.reset();
    server.stop();
    auto db = store::open({path, 1ull << 30, {std::string(file_store::files_db)}});
    EXPECT_TRUE(db) << db.error();
    std::vector<std::string> records;
    if (!db) return records;
    (*db)->scan(file_store::files_db, "", [&](std::string_view, std::string_view record) {
      records.emplace_back(record);
      return true;
    });
    return records;
  }
};

TEST_F(FilesInjectSmall, an_attachment_over_max_bytes_discards_the_ones_before_it) {
  // Two that fit (one exactly max_bytes), then one a byte over, then one that would fit: none is kept.
  auto r = inject(channel, {{"text", "four files"},
                            {"msg_id", "m-1"},
                            {"files", json::array{item("first.txt", 100), item("exact.bin", inject_max_bytes),
                                                  item("over.bin", inject_max_bytes + 1), item("after.txt", 100)}}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("payload_too_large"), std::string::npos) << r.body;

  // The msg_id was never emitted: the same one is a new message now, and its single file is kept and downloadable.
  auto ok = inject(channel, {{"text", "kept"}, {"msg_id", "m-1"}, {"files", json::array{item("kept.txt", 100)}}});
  ASSERT_EQ(ok.status, 202) << ok.body;
  EXPECT_EQ(ok.json().at("duplicate"), false) << ok.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "text"), "kept") << "the failed inject reached no socket";
  ASSERT_EQ(p.at("files").as_array().size(), 1u);
  auto ref = jstr(p.at("files").as_array()[0].as_object(), "file_ref");
  EXPECT_EQ(get_with_key(ref).status, 200);

  auto records = stored_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].find("kept.txt"), std::string::npos) << records[0];
}

// The first attachment failing stores nothing either; a file of exactly max_bytes on its own is kept.
TEST_F(FilesInjectSmall, a_first_attachment_over_max_bytes_stores_nothing) {
  auto r = inject(channel, {{"text", "big first"}, {"files", json::array{item("over.bin", 3 * inject_max_bytes), item("b.txt", 10)}}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("payload_too_large"), std::string::npos) << r.body;
  ASSERT_EQ(inject(channel, {{"text", "exact"}, {"files", json::array{item("exact.bin", inject_max_bytes)}}}).status, 202);
  ASSERT_TRUE(dp->next_push("chat.message", channel));
  auto records = stored_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].find("exact.bin"), std::string::npos) << records[0];
}

}  // namespace
}  // namespace xconn::test
