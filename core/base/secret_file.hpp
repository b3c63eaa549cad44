// A small secret kept in a file of its own (the API key, the sealing key): created once with O_EXCL and mode 0600,
// read back on every start, its mode tightened if someone loosened it. A symbolic link, a file with other hard links,
// or anything but a plain file, is refused and left as it is.
#pragma once

#include <boost/system/result.hpp>

#include <filesystem>
#include <functional>
#include <string>

namespace xconn {

// Reads file, or creates it (and its folder) holding make(). The content, trimmed of trailing whitespace, must be
// at least min_size characters; the error names the file, never its content.
boost::system::result<std::string, std::string> read_or_create_secret_file(const std::filesystem::path& file,
                                                                           const std::function<std::string()>& make,
                                                                           std::size_t min_size);

}  // namespace xconn
