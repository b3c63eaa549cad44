#include "core/plugin_host/elf_check.hpp"

#include <elf.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

namespace xconn {

namespace {

#if defined(__x86_64__)
constexpr std::uint16_t host_machine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t host_machine = EM_AARCH64;
#else
#error "elf_check knows the ELF machine of x86_64 and aarch64 hosts only"
#endif

static_assert(std::endian::native == std::endian::little, "elf_check reads little-endian ELF headers in place");

// Copies a header out of the image (memcpy: the bytes need not be aligned).
template <typename T>
T read_at(std::string_view image, std::uint64_t offset) {
  T out;
  std::memcpy(&out, image.data() + offset, sizeof out);
  return out;
}

// Whether [offset, offset + count * entry) lies inside size bytes, with no sum or product wrapping around.
bool table_inside(std::uint64_t offset, std::uint64_t count, std::uint64_t entry, std::uint64_t size) {
  if (offset > size) return false;
  if (count != 0 && entry > (size - offset) / count) return false;
  return true;
}

std::string range_text(std::uint64_t offset, std::uint64_t length) {
  return "bytes " + std::to_string(offset) + " + " + std::to_string(length);
}

}  // namespace

std::string elf_layout_error(std::string_view image) {
  const std::uint64_t size = image.size();
  const std::string in_file = " (the file has " + std::to_string(size) + " bytes; cut short?)";
  if (size < EI_NIDENT || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (static_cast<unsigned char>(image[EI_CLASS]) != ELFCLASS64)
    return "not a 64-bit ELF file (class " + std::to_string(static_cast<unsigned char>(image[EI_CLASS])) + ")";
  if (static_cast<unsigned char>(image[EI_DATA]) != ELFDATA2LSB) return "not a little-endian ELF file";
  if (size < sizeof(Elf64_Ehdr)) return "the ELF header lies past the end of the file" + in_file;
  auto eh = read_at<Elf64_Ehdr>(image, 0);
  if (eh.e_type != ET_DYN) return "not an ELF shared object (type " + std::to_string(eh.e_type) + ")";
  if (eh.e_machine != host_machine)
    return "built for ELF machine " + std::to_string(eh.e_machine) + ", this host is " + std::to_string(host_machine);

  // PN_XNUM (the count kept in section 0) is not for a shared object; the dynamic loader does not read it.
  if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) return "no program headers";
  if (eh.e_phentsize != sizeof(Elf64_Phdr))
    return "program header size " + std::to_string(eh.e_phentsize) + ", not " + std::to_string(sizeof(Elf64_Phdr));
  if (!table_inside(eh.e_phoff, eh.e_phnum, sizeof(Elf64_Phdr), size))
    return "the program headers (" + std::to_string(eh.e_phnum) + " at offset " + std::to_string(eh.e_phoff) +
           ") lie past the end of the file" + in_file;
  for (std::uint64_t i = 0; i < eh.e_phnum; ++i) {
    auto ph = read_at<Elf64_Phdr>(image, eh.e_phoff + i * sizeof(Elf64_Phdr));
    // Every segment with file bytes, not only PT_LOAD: the loader also reads notes and the dynamic table, and a
    // well-formed file has them all inside it.
    if (ph.p_filesz != 0 && !table_inside(ph.p_offset, 1, ph.p_filesz, size))
      return std::string(ph.p_type == PT_LOAD ? "PT_LOAD segment " : "segment ") + std::to_string(i) + " (" +
             range_text(ph.p_offset, ph.p_filesz) + ") lies past the end of the file" + in_file;
  }

  if (eh.e_shoff == 0) {
    if (eh.e_shnum != 0) return "section headers counted but not placed";
    return "";  // no section header table at all: nothing more to check
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr))
    return "section header size " + std::to_string(eh.e_shentsize) + ", not " + std::to_string(sizeof(Elf64_Shdr));
  if (!table_inside(eh.e_shoff, 1, sizeof(Elf64_Shdr), size))
    return "the section headers (offset " + std::to_string(eh.e_shoff) + ") lie past the end of the file" + in_file;
  // More than 0xff00 sections: e_shnum is 0 and section 0's sh_size holds the count.
  std::uint64_t sections = eh.e_shnum != 0 ? eh.e_shnum : read_at<Elf64_Shdr>(image, eh.e_shoff).sh_size;
  if (!table_inside(eh.e_shoff, sections, sizeof(Elf64_Shdr), size))
    return "the section headers (" + std::to_string(sections) + " at offset " + std::to_string(eh.e_shoff) +
           ") lie past the end of the file" + in_file;
  return "";
}

std::string elf_file_layout_error(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot read the file";
  std::string image{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return "cannot read the file";
  return elf_layout_error(image);
}

}  // namespace xconn
