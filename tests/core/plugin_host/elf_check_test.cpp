// The ELF layout check before dlopen: a real plugin passes; cut short, pointed past its end, overflowing or not
// ELF at all, it is refused with a reason, never mapped (dlopen of such a file dies of SIGBUS).
#include "core/plugin_host/elf_check.hpp"
#include "core/plugin_host/plugin_library.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <limits>

namespace xconn {
namespace {

std::string echo_image() { return test::read_file(test::plugin_dir() / "echo.so"); }

// Reads and writes a header in a byte image (the bytes need not be aligned).
template <typename T>
T header_at(const std::string& image, std::size_t offset) {
  T out;
  std::memcpy(&out, image.data() + offset, sizeof out);
  return out;
}
template <typename T>
void put_header(std::string& image, std::size_t offset, const T& value) {
  std::memcpy(image.data() + offset, &value, sizeof value);
}

// The index of the first PT_LOAD program header.
std::size_t first_load(const std::string& image) {
  auto eh = header_at<Elf64_Ehdr>(image, 0);
  for (std::size_t i = 0; i < eh.e_phnum; ++i)
    if (header_at<Elf64_Phdr>(image, eh.e_phoff + i * sizeof(Elf64_Phdr)).p_type == PT_LOAD) return i;
  ADD_FAILURE() << "no PT_LOAD in echo.so";
  return 0;
}

void expect_refused(const std::string& image, const std::string& part, const std::string& what) {
  auto error = elf_layout_error(image);
  EXPECT_NE(error.find(part), std::string::npos) << what << ": \"" << error << "\"";
}

TEST(elf_check, a_real_plugin_passes) {
  auto image = echo_image();
  ASSERT_GT(image.size(), 64u * 1024);
  EXPECT_EQ(elf_layout_error(image), "");
  EXPECT_EQ(elf_file_layout_error(test::plugin_dir() / "echo.so"), "");
}

TEST(elf_check, a_plugin_cut_short_is_refused) {
  auto image = echo_image();
  expect_refused(image.substr(0, image.size() / 2), "past the end of the file", "cut to 50 %");
  expect_refused(image.substr(0, 4096), "past the end of the file", "cut to 4 KiB");
  expect_refused(image.substr(0, image.size() - 1), "past the end of the file", "one byte short");
  expect_refused(image.substr(0, sizeof(Elf64_Ehdr) - 1), "the ELF header lies past the end", "header cut");
  expect_refused(image.substr(0, EI_NIDENT), "the ELF header lies past the end", "ident only");
  expect_refused("", "not an ELF file", "empty");
  expect_refused(image.substr(0, 3), "not an ELF file", "three bytes");
}

TEST(elf_check, a_segment_past_the_end_is_refused_without_section_headers) {
  // Without a section header table only the segments tell that the file is cut.
  auto image = echo_image();
  auto eh = header_at<Elf64_Ehdr>(image, 0);
  eh.e_shoff = 0;
  eh.e_shnum = 0;
  eh.e_shstrndx = 0;
  put_header(image, 0, eh);
  EXPECT_EQ(elf_layout_error(image), "");
  expect_refused(image.substr(0, image.size() / 2), "PT_LOAD segment", "stripped, cut to 50 %");
}

TEST(elf_check, header_fields_pointing_past_the_end_are_refused) {
  const auto good = echo_image();
  const auto size = good.size();
  auto eh0 = header_at<Elf64_Ehdr>(good, 0);
  {
    auto image = good;
    auto eh = eh0;
    eh.e_phoff = size - sizeof(Elf64_Phdr) / 2;
    put_header(image, 0, eh);
    expect_refused(image, "the program headers", "e_phoff near the end");
  }
  {
    auto image = good;
    auto eh = eh0;
    eh.e_shoff = size;
    put_header(image, 0, eh);
    expect_refused(image, "the section headers", "e_shoff at the end");
  }
  {
    auto image = good;
    auto eh = eh0;
    eh.e_shnum = static_cast<Elf64_Half>(eh.e_shnum + 1);
    put_header(image, 0, eh);
    expect_refused(image, "the section headers", "one section header too many");
  }
  {
    auto image = good;
    auto at = eh0.e_phoff + first_load(image) * sizeof(Elf64_Phdr);
    auto ph = header_at<Elf64_Phdr>(image, at);
    ph.p_filesz = size - ph.p_offset + 1;
    put_header(image, at, ph);
    expect_refused(image, "PT_LOAD segment", "p_filesz one past the end");
  }
  {
    auto image = good;
    auto at = eh0.e_phoff + first_load(image) * sizeof(Elf64_Phdr);
    auto ph = header_at<Elf64_Phdr>(image, at);
    ph.p_offset = size + 4096;
    put_header(image, at, ph);
    expect_refused(image, "PT_LOAD segment", "p_offset past the end");
  }
  {
    auto image = good;
    auto eh = eh0;
    eh.e_phnum = 0;
    put_header(image, 0, eh);
    expect_refused(image, "no program headers", "e_phnum 0");
    eh.e_phnum = PN_XNUM;
    put_header(image, 0, eh);
    expect_refused(image, "no program headers", "e_phnum PN_XNUM");
  }
  {
    auto image = good;
    auto eh = eh0;
    eh.e_phentsize = sizeof(Elf64_Phdr) - 8;
    put_header(image, 0, eh);
    expect_refused(image, "program header size", "short e_phentsize");
    eh = eh0;
    eh.e_shentsize = 1;
    put_header(image, 0, eh);
    expect_refused(image, "section header size", "short e_shentsize");
  }
}

TEST(elf_check, offsets_whose_sums_overflow_are_refused) {
  // Each would pass a check written as offset + length <= size: the sum wraps to a small number.
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  const auto good = echo_image();
  auto eh0 = header_at<Elf64_Ehdr>(good, 0);
  {
    auto image = good;
    auto at = eh0.e_phoff + first_load(image) * sizeof(Elf64_Phdr);
    auto ph = header_at<Elf64_Phdr>(image, at);
    ph.p_offset = max - 15;
    ph.p_filesz = 32;  // offset + filesz == 16
    put_header(image, at, ph);
    expect_refused(image, "PT_LOAD segment", "p_offset + p_filesz wraps");
    ph.p_offset = 0;
    ph.p_filesz = max;
    put_header(image, at, ph);
    expect_refused(image, "PT_LOAD segment", "p_filesz of 2^64 - 1");
  }
  {
    auto image = good;
    auto eh = eh0;
    eh.e_phoff = max - sizeof(Elf64_Phdr) + 1;  // + one header == 0
    put_header(image, 0, eh);
    expect_refused(image, "the program headers", "e_phoff + table wraps");
  }
  {
    auto image = good;
    auto eh = eh0;
    eh.e_shoff = max - 63;
    put_header(image, 0, eh);
    expect_refused(image, "the section headers", "e_shoff + table wraps");
  }
  {
    // Extended numbering: e_shnum 0 and section 0's sh_size the count; 2^58 headers of 64 bytes is 2^64 bytes.
    auto image = good;
    auto eh = eh0;
    eh.e_shnum = 0;
    put_header(image, 0, eh);
    auto s0 = header_at<Elf64_Shdr>(image, eh.e_shoff);
    s0.sh_size = std::uint64_t{1} << 58;
    put_header(image, eh.e_shoff, s0);
    expect_refused(image, "the section headers", "extended section count overflows");
  }
}

TEST(elf_check, files_that_are_not_a_shared_object_for_this_host_are_refused) {
  const auto good = echo_image();
  expect_refused("this is not an ELF file\n", "not an ELF file", "text");
  expect_refused(std::string(4096, '\0'), "not an ELF file", "zeros");
  auto with_byte = [&](std::size_t at, unsigned char value) {
    auto image = good;
    image[at] = static_cast<char>(value);
    return image;
  };
  expect_refused(with_byte(EI_CLASS, ELFCLASS32), "not a 64-bit ELF file", "32-bit class");
  expect_refused(with_byte(EI_CLASS, 7), "not a 64-bit ELF file", "unknown class");
  expect_refused(with_byte(EI_DATA, ELFDATA2MSB), "not a little-endian", "big-endian");
  auto eh = header_at<Elf64_Ehdr>(good, 0);
  auto image = good;
  eh.e_type = ET_EXEC;
  put_header(image, 0, eh);
  expect_refused(image, "not an ELF shared object", "an executable");
  eh = header_at<Elf64_Ehdr>(good, 0);
  eh.e_machine = EM_RISCV;
  image = good;
  put_header(image, 0, eh);
  expect_refused(image, "built for ELF machine", "another machine");
  EXPECT_EQ(elf_file_layout_error(test::plugin_dir() / "no-such-file.so"), "cannot read the file");
}

// The loader itself: a cut copy is refused before dlopen, and a cached copy cut by a crash is written again.
TEST(elf_check, the_loader_refuses_a_cut_file_and_repairs_a_cut_cached_copy) {
  test::temp_dir dir;
  auto image = echo_image();
  std::filesystem::create_directories(dir.path() / "plugins");
  auto cut = dir.path() / "plugins" / "echo.so";
  test::write_file(cut, image.substr(0, image.size() / 2));
  auto cache = dir.path() / "plugin-cache";
  auto refused = load_plugin_library(cut, cache);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("not a loadable shared library: "), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find("cut short"), std::string::npos) << refused.error();
  EXPECT_FALSE(std::filesystem::exists(cache) && !std::filesystem::is_empty(cache)) << "a refused file is not cached";

  // The whole file, with a cached copy of its sha256 cut in half (a power loss after the rename).
  test::write_file(cut, image);
  auto sha = file_sha256(cut);
  ASSERT_TRUE(sha);
  std::filesystem::create_directories(cache);
  test::write_file(cache / (*sha + ".so"), image.substr(0, image.size() / 2));
  auto loaded = load_plugin_library(cut, cache);
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ((*loaded)->manifest.id, "echo");
  EXPECT_EQ(std::filesystem::file_size(cache / (*sha + ".so")), image.size());
}

}  // namespace
}  // namespace xconn
