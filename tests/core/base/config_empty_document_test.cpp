// A document with no settings: every default when the server starts, refused when read again on a reload (an
// emptied or half-written file must not put every key back to its default).
#include "core/base/config.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace xconn::test {
namespace {

const char* const no_settings[] = {"", " \n\t\n", "# only a comment\n# and another\n", "---\n", "--- # c\n...\n",
                                   "~\n", "null\n", "{}\n", "\n\n"};

TEST(ConfigEmptyDocument, IsRefusedWhenAskedToAndNamesTheFileNotAKey) {
  for (const char* doc : no_settings) {
    auto r = parse_config(doc, "xconnd.yaml", empty_document::refused);
    ASSERT_FALSE(r) << "'" << doc << "'";
    EXPECT_EQ(r.error().key, "") << doc;
    EXPECT_EQ(r.error().line, 0) << doc;
    EXPECT_EQ(r.error().what().rfind("xconnd.yaml: no settings", 0), 0u) << r.error().what();
  }
}

TEST(ConfigEmptyDocument, GivesDefaultsAtAStartAndFromText) {
  for (const char* doc : no_settings) {
    auto r = parse_config(doc);
    ASSERT_TRUE(r) << "'" << doc << "': " << r.error().what();
    EXPECT_EQ(r->server.listen, "127.0.0.1:8840");
    EXPECT_TRUE(r->connectors.empty());
  }
}

// One setting is enough, even a section left empty (it means that section's defaults, as it always did).
TEST(ConfigEmptyDocument, AnySettingIsNotEmpty) {
  for (const char* doc : {"log:\n", "# c\nserver:\n  heartbeat_s: 45\n", "{log: {}}\n"}) {
    auto r = parse_config(doc, "<config>", empty_document::refused);
    EXPECT_TRUE(r) << "'" << doc << "': " << r.error().what();
  }
  // The rest of the checks still run: an invalid document is refused for its own reason, not as empty.
  auto bad = parse_config("server: [\n", "<config>", empty_document::refused);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.find("no settings"), std::string::npos) << bad.error().what();
  auto list = parse_config("[]\n", "<config>", empty_document::refused);
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().message, "the top level must be a map");
}

TEST(ConfigEmptyDocument, LoadConfigPassesTheRuleOn) {
  temp_dir dir;
  auto file = dir.path() / "xconnd.yaml";
  write_file(file, "# everything commented out\n#server:\n#  listen: 127.0.0.1:9000\n");
  auto refused = load_config(file.string(), empty_document::refused);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().file, file.string());
  EXPECT_NE(refused.error().message.find("no settings"), std::string::npos);
  auto started = load_config(file.string());
  ASSERT_TRUE(started) << started.error().what();
  EXPECT_EQ(started->source_path, file.string());
}

}  // namespace
}  // namespace xconn::test
