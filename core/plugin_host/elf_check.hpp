// The layout check a plugin file passes before dlopen. The loader maps each PT_LOAD segment from the file and
// reads it: a segment that reaches past the end of a cut-short file is a page with no bytes behind it, and the
// first touch kills the process with SIGBUS (at every start while the file lies in plugins.dir). So the headers are
// read by hand first, and a file whose tables or segments do not lie inside it is refused like any bad file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace xconn {

// "" when image (a whole file's bytes) is a 64-bit little-endian ELF shared object for this host's machine whose
// ELF header, program headers, every segment's file bytes and section header table lie inside it; else why not,
// one line for the log.
std::string elf_layout_error(std::string_view image);

// The same for a file on disk, read whole ("" when it passes).
std::string elf_file_layout_error(const std::filesystem::path& file);

}  // namespace xconn
