#include "core/base/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace xconn::log {
namespace {

std::shared_mutex secrets_mutex;
std::vector<std::string> secrets;  // longest first, so a secret containing another is replaced whole

// Formats each line, scrubs it, then hands it to the real sinks.
class redacting_sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit redacting_sink(std::vector<spdlog::sink_ptr> targets) : targets_(std::move(targets)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string scrubbed = redact(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy(msg.time, msg.source, msg.logger_name, msg.level, scrubbed);
    for (auto& t : targets_)
      if (t->should_log(copy.level)) t->log(copy);
  }
  void flush_() override {
    for (auto& t : targets_) t->flush();
  }
  // The logger's pattern is set on this sink; the real sinks are the ones that format.
  void set_formatter_(std::unique_ptr<spdlog::formatter> f) override {
    for (auto& t : targets_) t->set_formatter(f->clone());
    base_sink::set_formatter_(std::move(f));
  }

 private:
  std::vector<spdlog::sink_ptr> targets_;
};

}  // namespace

void init(spdlog::level::level_enum level, const std::string& file_path) {
  std::vector<spdlog::sink_ptr> targets{std::make_shared<spdlog::sinks::stderr_sink_mt>()};
  if (!file_path.empty()) targets.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(file_path));
  auto logger = std::make_shared<spdlog::logger>("xconn", std::make_shared<redacting_sink>(std::move(targets)));
  logger->set_level(level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
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
