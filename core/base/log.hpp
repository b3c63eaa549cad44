// The host log: spdlog, one line per event, with every registered secret replaced before it is written.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

namespace xconn::log {

// Installs the default logger: stderr, plus file_path when not empty. Safe to call again (tests).
void init(spdlog::level::level_enum level = spdlog::level::info, const std::string& file_path = {});

// Every later line has secret replaced by "[redacted]". Secrets shorter than 4 bytes are ignored (they
// would shred ordinary words); trimmed, deduplicated.
void add_secret(std::string_view secret);

// Returns text with every registered secret replaced (for text that leaves the host other ways).
std::string redact(std::string_view text);

}  // namespace xconn::log
