// The host log: spdlog, one line per event, with every registered secret replaced before it is written.
//
// Two formats. text: "2026-12-06T20:00:00.123Z info message" (UTC); under systemd, when stderr is the journal's
// own stream (JOURNAL_STREAM names it), the time is left to journald and the line starts with a syslog priority
// ("<6>info message"), so journalctl keeps each line's level. json: one object a line,
// {"ts":"2026-12-06T20:00:00.123Z","level":"info","thread":"xconn-io-0","msg":"message"} (level one of trace,
// debug, info, warn, error, critical; thread the thread's name, else its id). Either way a line is one line of valid
// UTF-8: in text, control characters show as \n, \t, \x1b and invalid UTF-8 bytes as \xff; in json they are
// escaped as JSON requires and an invalid UTF-8 byte becomes U+FFFD.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

namespace xconn {
struct log_config;  // core/base/config.hpp
}

namespace xconn::log {

// Installs the host logger (text, full time stamps): stderr, plus file_path when not empty. Safe to call again
// (tests). A file that cannot be opened throws std::runtime_error.
void init(spdlog::level::level_enum level = spdlog::level::info, const std::string& file_path = {});

// Sets the host log as the configuration says: its level, its format, and where lines go (log.file "": stderr;
// a path: that file alone, appended to, created 0640, its folder must exist). Returns "" when done; else why not
// ("log.file: cannot open …"), and the log is left as it was.
std::string configure(const log_config& cfg);

// Closes the log file and opens its path again (logrotate renamed it: postrotate `kill -USR1`). Lines logged
// meanwhile by other threads go whole to the old file or to the new one. Returns "" when done or when the log goes
// to stderr; else why not (also logged), and lines keep going to the old file.
std::string reopen();

// Every later line has secret replaced by "[redacted]". Secrets shorter than 4 bytes are ignored (they
// would shred ordinary words); trimmed, deduplicated.
void add_secret(std::string_view secret);

// Returns text with every registered secret replaced (for text that leaves the host other ways).
std::string redact(std::string_view text);

}  // namespace xconn::log
