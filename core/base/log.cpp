#include "core/base/log.hpp"

#include "core/base/config.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace xconn::log {
namespace {

std::shared_mutex secrets_mutex;
std::vector<std::string> secrets;  // longest first, so a secret containing another is replaced whole

constexpr const char* text_pattern = "%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v";
constexpr const char* journal_text_pattern = "%^%l%$ %v";  // journald stamps each line itself
constexpr char hex_digits[] = "0123456789abcdef";

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing past
// U+10FFFF) that starts at s[i]; 0 when none does.
std::size_t utf8_sequence_at(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i), lo = 0x80, hi = 0xbf;
  std::size_t n = 0;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) n = 3;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else return 0;
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  return n;
}

bool plain_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// A message as one line of valid UTF-8 for the text format: control characters as \n, \r, \t or \xNN, a byte
// that starts no well-formed UTF-8 sequence as \xNN.
void append_text_safe(std::string& out, std::string_view s) {
  if (plain_ascii(s)) {
    out.append(s);
    return;
  }
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x20 || c == 0x7f ? 0 : utf8_sequence_at(s, i);
    if (n > 0) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else {
      out += "\\x";
      out.push_back(hex_digits[c >> 4]);
      out.push_back(hex_digits[c & 0xf]);
    }
    ++i;
  }
}

// A JSON string (RFC 8259): quote, backslash, control characters and DEL escaped; a byte that starts no
// well-formed UTF-8 sequence becomes U+FFFD, so the line is valid UTF-8 and parses anywhere.
void append_json_quoted(std::string& out, std::string_view s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    std::size_t n = c < 0x20 || c == 0x7f ? 0 : utf8_sequence_at(s, i);
    if (n > 0) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out.push_back(hex_digits[c >> 4]);
          out.push_back(hex_digits[c & 0xf]);
        } else {
          out += "\\ufffd";
        }
    }
    ++i;
  }
  out.push_back('"');
}

// {"ts":"2026-12-06T20:00:00.123Z","level":"info","thread":"xconn-io-0","msg":"..."}; the message is already
// redacted (the sink does that before formatting).
class json_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    static constexpr const char* level_names[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    using namespace std::chrono;
    auto secs = floor<seconds>(msg.time);
    auto ms = duration_cast<milliseconds>(msg.time - secs).count();
    std::time_t t = system_clock::to_time_t(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char ts[48];
    int ts_len = std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    char name[16] = {};
    std::string thread = pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0] != '\0'
                             ? redact(name)
                             : std::to_string(msg.thread_id);
    auto lvl = static_cast<std::size_t>(msg.level);

    std::string line;
    line.reserve(96 + msg.payload.size());
    line += R"({"ts":")";
    line.append(ts, static_cast<std::size_t>(std::max(ts_len, 0)));
    line += R"(","level":")";
    line += level_names[lvl < std::size(level_names) ? lvl : 2];
    line += R"(","thread":)";
    append_json_quoted(line, thread);
    line += R"(,"msg":)";
    append_json_quoted(line, std::string_view(msg.payload.data(), msg.payload.size()));
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<json_formatter>(); }
};

void write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // a full disk or a closed stderr: the line is lost, the caller goes on
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// The host's one sink: scrubs each message of secrets, formats it, and writes it to stderr and/or the log file,
// each line with one write(2) under the sink's mutex, so lines never interleave and the file can be swapped
// between two lines.
class host_sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  struct setup {
    std::unique_ptr<spdlog::formatter> formatter;
    bool text = true;        // control characters and invalid UTF-8 shown escaped (json escapes its own way)
    bool to_stderr = true;
    bool journal = false;    // stderr is journald's stream: each line starts with its syslog priority
    int fd = -1;             // the log file, -1: none
    std::string path;        // its path, for reopen
  };

  // Takes the new set-up whole; returns the file descriptor it replaced (-1: none) for the caller to close.
  int install(setup s) {
    std::lock_guard lock(mutex_);
    formatter_ = std::move(s.formatter);
    text_ = s.text;
    to_stderr_ = s.to_stderr;
    journal_ = s.journal;
    path_ = std::move(s.path);
    std::swap(fd_, s.fd);
    return s.fd;
  }

  std::string file_path() {
    std::lock_guard lock(mutex_);
    return fd_ >= 0 ? path_ : std::string();
  }

  // Puts fd in place of the file if the log still goes to path; returns the descriptor to close.
  int swap_file(const std::string& path, int fd) {
    std::lock_guard lock(mutex_);
    if (fd_ < 0 || path_ != path) return fd;
    std::swap(fd_, fd);
    return fd;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    int saved_errno = errno;  // logging never changes what the caller reads from errno
    std::string scrubbed = redact(std::string_view(msg.payload.data(), msg.payload.size()));
    if (text_ && !plain_ascii(scrubbed)) {
      std::string safe;
      safe.reserve(scrubbed.size() + 16);
      append_text_safe(safe, scrubbed);
      scrubbed = std::move(safe);
    }
    spdlog::details::log_msg copy = msg;
    copy.payload = scrubbed;
    spdlog::memory_buf_t line;
    if (journal_) {
      // sd-daemon(3) priorities: journald takes "<N>" off the line and records it as the entry's PRIORITY.
      static constexpr char priority[] = {'7', '7', '6', '4', '3', '2', '2'};
      auto lvl = static_cast<std::size_t>(msg.level);
      char prefix[3] = {'<', priority[lvl < sizeof priority ? lvl : 2], '>'};
      line.append(prefix, prefix + 3);
    }
    formatter_->format(copy, line);
    if (to_stderr_) write_all(STDERR_FILENO, line.data(), line.size());
    if (fd_ >= 0) {
      if (journal_) write_all(fd_, line.data() + 3, line.size() - 3);
      else write_all(fd_, line.data(), line.size());
    }
    errno = saved_errno;
  }
  void flush_() override {}  // every line is written at once, nothing is buffered here

 private:
  bool text_ = true;
  bool to_stderr_ = true;
  bool journal_ = false;
  int fd_ = -1;
  std::string path_;
};

struct host_log {
  std::shared_ptr<host_sink> sink = std::make_shared<host_sink>();
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>("xconn", sink);
};

// Never destroyed: threads may still log while the process exits.
host_log& the_log() {
  static auto* log = new host_log;
  return *log;
}

void make_default(host_log& h) {
  if (spdlog::default_logger_raw() != h.logger.get()) spdlog::set_default_logger(h.logger);
}

void close_fd(int fd) {
  if (fd >= 0) ::close(fd);
}

// O_APPEND: each line lands whole at the end, whoever else appends; 0640 for a new file (less by the umask).
int open_log_file(const std::string& path, std::string& why) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
  if (fd < 0) {
    int e = errno;
    why = "log.file: cannot open " + path + ": " + std::system_category().message(e);
    if (e == ENOENT) why += " (the folder must exist)";
  }
  return fd;
}

// systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream it connects stderr to; a child that inherited the
// variable but not the stream (stderr redirected) does not match.
bool stderr_is_the_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr) return false;
  std::string_view v(env);
  auto colon = v.find(':');
  if (colon == std::string_view::npos) return false;
  unsigned long long dev = 0, ino = 0;
  auto [p1, e1] = std::from_chars(v.data(), v.data() + colon, dev);
  auto [p2, e2] = std::from_chars(v.data() + colon + 1, v.data() + v.size(), ino);
  if (e1 != std::errc() || p1 != v.data() + colon || e2 != std::errc() || p2 != v.data() + v.size()) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev && static_cast<unsigned long long>(st.st_ino) == ino;
}

bool level_from_name(const std::string& name, spdlog::level::level_enum& out) {
  static constexpr std::pair<const char*, spdlog::level::level_enum> names[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err}};
  for (const auto& [n, l] : names)
    if (name == n) {
      out = l;
      return true;
    }
  return false;
}

std::unique_ptr<spdlog::formatter> text_formatter(const char* pattern) {
  return std::make_unique<spdlog::pattern_formatter>(pattern, spdlog::pattern_time_type::utc);
}

}  // namespace

void init(spdlog::level::level_enum level, const std::string& file_path) {
  auto& h = the_log();
  int fd = -1;
  if (!file_path.empty()) {
    std::string why;
    fd = open_log_file(file_path, why);
    if (fd < 0) throw std::runtime_error(why);
  }
  close_fd(h.sink->install({text_formatter(text_pattern), true, true, false, fd, file_path}));
  h.logger->set_level(level);
  make_default(h);
}

std::string configure(const log_config& cfg) {
  spdlog::level::level_enum level{};
  if (!level_from_name(cfg.level, level)) return "log.level: expected trace, debug, info, warn or error";
  if (cfg.format != "text" && cfg.format != "json") return "log.format: expected text or json";
  int fd = -1;
  if (!cfg.file.empty()) {
    std::string why;
    fd = open_log_file(cfg.file, why);
    if (fd < 0) return why;
  }
  bool journal = cfg.file.empty() && stderr_is_the_journal();
  bool text = cfg.format == "text";
  std::unique_ptr<spdlog::formatter> formatter;
  if (text) formatter = text_formatter(journal ? journal_text_pattern : text_pattern);
  else formatter = std::make_unique<json_formatter>();
  auto& h = the_log();
  close_fd(h.sink->install({std::move(formatter), text, cfg.file.empty(), journal, fd, cfg.file}));
  h.logger->set_level(level);
  make_default(h);
  return {};
}

std::string reopen() {
  auto& h = the_log();
  std::string path = h.sink->file_path();
  if (path.empty()) return {};
  std::string why;
  int fd = open_log_file(path, why);
  if (fd < 0) {
    h.logger->error("log: cannot reopen the log file, still writing to the old one: {}", why);
    return why;
  }
  close_fd(h.sink->swap_file(path, fd));
  return {};
}

void add_secret(std::string_view secret) {
  while (!secret.empty() && (secret.front() == ' ' || secret.front() == '\t')) secret.remove_prefix(1);
  while (!secret.empty() && (secret.back() == ' ' || secret.back() == '\t')) secret.remove_suffix(1);
  if (secret.size() < 4) return;
  std::unique_lock lock(secrets_mutex);
  if (std::find(secrets.begin(), secrets.end(), secret) != secrets.end()) return;
  secrets.emplace_back(secret);
  std::sort(secrets.begin(), secrets.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
}

std::string redact(std::string_view text) {
  std::string out(text);
  std::shared_lock lock(secrets_mutex);
  for (const auto& s : secrets) {
    for (auto pos = out.find(s); pos != std::string::npos; pos = out.find(s, pos + 10))
      out.replace(pos, s.size(), "[redacted]");
  }
  return out;
}

}  // namespace xconn::log
