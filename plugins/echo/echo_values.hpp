// Small pieces of echo that need no plugin state: reading JSON arguments, the answers it builds, and the
// bookkeeping of one echo_burst. Header-only: echo is one translation unit (it compiles Boost.JSON in).
#pragma once

#include "random_id.hpp"

#include <xconn/plugin.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace echo {

namespace json = boost::json;
using xconn::sdk::completion;
using xconn::sdk::emit_result;
using xconn::sdk::error;
using xconn::sdk::http_answer;

inline constexpr std::int64_t sent_log_max_default = 1000;
inline constexpr std::int64_t sent_log_max_limit = 100000;

inline std::optional<json::object> parse_object(std::string_view text) {
  json::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) return std::nullopt;
  return std::move(value.as_object());
}

// An integer in [low, high]; 5.0 is a double in JSON and does not count.
inline std::optional<std::int64_t> integer_in(const json::value* value, std::int64_t low, std::int64_t high) {
  if (value == nullptr) return std::nullopt;
  std::int64_t n = 0;
  if (value->is_int64()) {
    n = value->get_int64();
  } else if (value->is_uint64() && value->get_uint64() <= static_cast<std::uint64_t>(high)) {
    n = static_cast<std::int64_t>(value->get_uint64());
  } else {
    return std::nullopt;
  }
  if (n < low || n > high) return std::nullopt;
  return n;
}

inline const json::string* string_at(const json::object& args, std::string_view key) {
  const json::value* value = args.if_contains(key);
  return value ? value->if_string() : nullptr;
}

// A stable business code, as the protocol's error codes: ^[a-z0-9_.-]{1,64}$.
inline bool is_stable_code(std::string_view code) {
  if (code.empty() || code.size() > 64) return false;
  for (char c : code) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

inline error invalid_arguments(std::string message) { return {"invalid_arguments", std::move(message), false}; }

inline std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 22 base62 characters: more than 128 bits, so neither a QR code nor a message id can be guessed.
inline std::string random_token() { return random_base62(22); }

// config.sent_log_max of a validated section.
inline std::size_t sent_log_max_of(std::string_view config_json) {
  std::int64_t max = sent_log_max_default;
  if (auto section = parse_object(config_json)) {
    if (auto* config = section->if_contains("config"); config && config->is_object()) {
      max = integer_in(config->get_object().if_contains("sent_log_max"), 1, sent_log_max_limit).value_or(max);
    }
  }
  return static_cast<std::size_t>(max);
}

// One inbound message from the far side of the channel.
inline std::string peer_message(std::string_view text, std::string_view msg_id) {
  return json::serialize(
      json::object{{"text", text}, {"sender_id", "echo-peer"}, {"sender_name", "Echo peer"}, {"msg_id", msg_id}});
}

// A send that cannot be delivered as it stands: retrying the same reply cannot help.
inline std::string invalid_reply(std::string_view message) {
  return json::serialize(
      json::object{{"ok", false}, {"error", "invalid_reply"}, {"retryable", false}, {"message", message}});
}

inline std::string http_error(int status, std::string_view code, std::string_view message) {
  return http_answer(status, json::serialize(json::object{{"error", {{"code", code}, {"message", message}}}}));
}

// One echo_burst in flight. Its emits report on any thread and in any order; the last one answers the tool.
class burst_state {
 public:
  burst_state(completion done, std::int64_t count) : done_(std::move(done)), count_(count) {}

  void report(const emit_result& result) {
    std::unique_lock lock(mutex_);
    if (!result.ok && failed_++ == 0) first_code_ = result.failure.code;
    if (++reported_ < count_) return;
    lock.unlock();  // every emit has reported: nothing changes any more
    if (failed_ == 0) return done_.ok(json::serialize(json::object{{"status", "sent"}, {"count", count_}}));
    done_.fail({"emit_failed",
                std::to_string(failed_) + " of " + std::to_string(count_) + " emits failed: " + first_code_, true});
  }

 private:
  std::mutex mutex_;
  completion done_;
  std::int64_t count_;
  std::int64_t reported_ = 0;
  std::int64_t failed_ = 0;
  std::string first_code_;
};

}  // namespace echo
