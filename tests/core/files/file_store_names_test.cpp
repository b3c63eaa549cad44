// The file store's name rules: clean_filename (last component, no control characters, at most 255 bytes of
// valid UTF-8), mime_type_for and valid_file_ref.
#include "core/files/file_store.hpp"

#include "core/base/ids.hpp"
#include "support/file_store_fixture.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace xconn::test {
namespace {

TEST(FileStoreNames, CleanFilename) {
  EXPECT_EQ(clean_filename("report.pdf"), "report.pdf");
  EXPECT_EQ(clean_filename("a b (1).txt"), "a b (1).txt");
  EXPECT_EQ(clean_filename("a/b/c.txt"), "c.txt");
  EXPECT_EQ(clean_filename("/etc/passwd"), "passwd");
  EXPECT_EQ(clean_filename("../../etc/passwd"), "passwd");
  EXPECT_EQ(clean_filename("C:\\Users\\me\\report.pdf"), "report.pdf");
  EXPECT_EQ(clean_filename("mixed/dir\\name.txt"), "name.txt");
  EXPECT_EQ(clean_filename("na\x01me\n.t\txt\x7f"), "name.txt");
  EXPECT_EQ(clean_filename(std::string("nul\0byte.txt", 12)), "nulbyte.txt");
  EXPECT_EQ(clean_filename("résumé.pdf"), "résumé.pdf");
  // Nothing usable left: "file".
  for (std::string_view name : {"", ".", "..", "a/..", "..\\..", "dir/", "\\", "\t\r\n", ".\x01.", "x/\x1f"})
    EXPECT_EQ(clean_filename(name), "file") << "[" << name << "]";
  EXPECT_EQ(clean_filename("..."), "...") << "only . and .. name a directory";
}

TEST(FileStoreNames, CleanFilenameCapsAt255BytesWithoutSplittingUtf8) {
  EXPECT_EQ(clean_filename(std::string(300, 'x')), std::string(255, 'x'));
  EXPECT_EQ(clean_filename(std::string(255, 'x')), std::string(255, 'x'));
  EXPECT_EQ(clean_filename("dir/" + std::string(255, 'y')), std::string(255, 'y')) << "the cap applies to the name";
  // A 2-byte character cut after its lead byte.
  EXPECT_EQ(clean_filename(std::string(254, 'a') + "é" + "zzz"), std::string(254, 'a'));
  // A 4-byte character cut after two of its bytes, and after three.
  EXPECT_EQ(clean_filename(std::string(253, 'a') + "😀" + "z"), std::string(253, 'a'));
  EXPECT_EQ(clean_filename(std::string(252, 'a') + "😀" + "z"), std::string(252, 'a'));
  // A 3-byte character cut after its lead byte.
  EXPECT_EQ(clean_filename(std::string(254, 'a') + "€"), std::string(254, 'a'));

  // Any mix of 1..4-byte characters: at most 255 bytes, valid UTF-8, a prefix of the name.
  const std::vector<std::string> alphabet = {"a", "Z", "é", "ß", "€", "中", "😀", "𝄞"};
  std::mt19937 gen(42);
  for (int round = 0; round < 200; ++round) {
    std::string name;
    while (name.size() < 300) name += alphabet[gen() % alphabet.size()];
    auto out = clean_filename(name);
    EXPECT_LE(out.size(), 255u) << name;
    EXPECT_TRUE(valid_utf8(out)) << name;
    EXPECT_EQ(name.compare(0, out.size(), out), 0) << "not a prefix: " << name;
    EXPECT_FALSE(out.empty());
  }
}

// Only a character cut by the cap must go: one that ends exactly at byte 255 fits and should stay.
TEST(FileStoreNames, CleanFilenameKeepsACharacterEndingExactlyAtTheCap) {
  EXPECT_EQ(clean_filename(std::string(253, 'a') + "é" + "b"), std::string(253, 'a') + "é");
  EXPECT_EQ(clean_filename(std::string(251, 'a') + "😀" + "b"), std::string(251, 'a') + "😀");
  EXPECT_EQ(clean_filename(std::string(252, 'a') + "€" + "€"), std::string(252, 'a') + "€");
}

TEST(FileStoreNames, MimeTypeFor) {
  EXPECT_EQ(mime_type_for("a.png"), "image/png");
  EXPECT_EQ(mime_type_for("A.JPG"), "image/jpeg");
  EXPECT_EQ(mime_type_for("b.jpeg"), "image/jpeg");
  EXPECT_EQ(mime_type_for("c.gif"), "image/gif");
  EXPECT_EQ(mime_type_for("clip.mp4"), "video/mp4");
  EXPECT_EQ(mime_type_for("clip.MOV"), "video/quicktime");
  EXPECT_EQ(mime_type_for("song.mp3"), "audio/mpeg");
  EXPECT_EQ(mime_type_for("doc.pdf"), "application/pdf");
  EXPECT_EQ(mime_type_for("notes.txt"), "text/plain");
  EXPECT_EQ(mime_type_for("data.json"), "application/json");
  EXPECT_EQ(mime_type_for("backup.tar.gz"), "application/gzip") << "the last extension counts";
  EXPECT_EQ(mime_type_for("png.exe"), "application/octet-stream");
  EXPECT_EQ(mime_type_for("noext"), "application/octet-stream");
  EXPECT_EQ(mime_type_for("png"), "application/octet-stream");
  EXPECT_EQ(mime_type_for("trailing."), "application/octet-stream");
  EXPECT_EQ(mime_type_for(""), "application/octet-stream");
  EXPECT_EQ(mime_type_for("x.pngx"), "application/octet-stream");
}

TEST(FileStoreNames, ValidFileRef) {
  const std::string hex32 = "0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(valid_file_ref("file_" + hex32));
  EXPECT_TRUE(valid_file_ref("file_" + random_hex(16)));
  EXPECT_FALSE(valid_file_ref(""));
  EXPECT_FALSE(valid_file_ref("file_"));
  EXPECT_FALSE(valid_file_ref("file_" + hex32.substr(1))) << "31 hex";
  EXPECT_FALSE(valid_file_ref("file_" + hex32 + "0")) << "33 hex";
  EXPECT_FALSE(valid_file_ref("file_0123456789ABCDEF0123456789abcdef")) << "uppercase";
  EXPECT_FALSE(valid_file_ref("file_0123456789abcdeg0123456789abcdef")) << "not hex";
  EXPECT_FALSE(valid_file_ref("File_" + hex32));
  EXPECT_FALSE(valid_file_ref("fileX" + hex32));
  EXPECT_FALSE(valid_file_ref("blob_" + hex32));
  EXPECT_FALSE(valid_file_ref("file_" + hex32.substr(0, 31) + "/"));
  EXPECT_FALSE(valid_file_ref(std::string("file_") + hex32.substr(0, 31) + std::string(1, '\0')));
}

}  // namespace
}  // namespace xconn::test
