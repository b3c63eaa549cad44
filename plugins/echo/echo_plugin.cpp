// The reference plugin echo: its target system lives inside the plugin, so every host path can be exercised
// with no outside service.
#include "code_points.hpp"
#include "delay_queue.hpp"
#include "echo_auth.hpp"
#include "echo_manifest.hpp"
#include "random_id.hpp"

#include <xconn/plugin.hpp>

#include <boost/json.hpp>
// Boost.JSON compiled into this library (its header-only mode, hidden like every symbol here), so the plugin
// never binds to whatever Boost the host carries. Exactly one translation unit may include this.
#include <boost/json/src.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace echo {
namespace {

namespace json = boost::json;
using xconn::sdk::completion;
using xconn::sdk::error;

constexpr std::int64_t sent_log_max_default = 1000;
constexpr std::int64_t sent_log_max_limit = 100000;
constexpr std::int64_t sleep_limit_ms = 600000;

std::optional<json::object> parse_object(std::string_view text) {
  json::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) return std::nullopt;
  return std::move(value.as_object());
}

// An integer in [low, high]; 5.0 is a double in JSON and does not count.
std::optional<std::int64_t> integer_in(const json::value* value, std::int64_t low, std::int64_t high) {
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

const json::string* string_at(const json::object& args, std::string_view key) {
  const json::value* value = args.if_contains(key);
  return value ? value->if_string() : nullptr;
}

// A stable business code, as the protocol's error codes: ^[a-z0-9_.-]{1,64}$.
bool is_stable_code(std::string_view code) {
  if (code.empty() || code.size() > 64) return false;
  for (char c : code) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

error invalid_arguments(std::string message) { return {"invalid_arguments", std::move(message), false}; }

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 22 base62 characters: more than 128 bits, so neither a QR code nor a message id can be guessed.
std::string random_token() { return random_base62(22); }

class echo_plugin final : public xconn::sdk::plugin {
 public:
  static std::string manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }

  // Messages name the key and never echo a value: auth values are secrets.
  static std::string validate_config(std::string_view config_json) {
    auto section = parse_object(config_json);
    if (!section) return "section: must be a JSON object";
    for (const auto& group : *section) {
      std::string group_name(group.key());
      if (group_name != "auth" && group_name != "config" && group_name != "route" && group_name != "policy") {
        return group_name + ": unknown group";
      }
      if (!group.value().is_object()) return group_name + ": must be an object";
      for (const auto& entry : group.value().get_object()) {
        std::string key = group_name + "." + std::string(entry.key());
        if (key != "config.sent_log_max") return key + ": unknown key";
        if (!integer_in(&entry.value(), 1, sent_log_max_limit)) return key + ": must be an integer 1..100000";
      }
    }
    return "";
  }

  // The config is validated before create. sent_log_max bounds the log of outbound finals, which arrives with
  // the host's send call.
  echo_plugin(xconn::sdk::host host, std::string_view config_json) : host_(host), auth_(unix_now_ms, random_token) {
    if (auto section = parse_object(config_json)) {
      if (auto* config = section->if_contains("config"); config && config->is_object()) {
        sent_log_max_ = integer_in(config->get_object().if_contains("sent_log_max"), 1, sent_log_max_limit)
                            .value_or(sent_log_max_default);
      }
    }
  }

  void start(completion done) override {
    sleeps_.start();
    host_.info("echo started");
    host_.report_health(XCONN_HEALTH_HEALTHY);
    done.ok();
  }

  void stop(completion done) override {
    sleeps_.stop();
    host_.info("echo stopped");
    done.ok();
  }

  void invoke_tool(std::string_view connector_channel_id, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view context_json, completion done) override {
    if (tool_id != "echo_reverse" && tool_id != "echo_fail" && tool_id != "echo_sleep" &&
        tool_id != "echo_send_message") {
      return plugin::invoke_tool(connector_channel_id, tool_id, arguments_json, context_json, std::move(done));
    }
    // The raw arguments also carry connector_channel_id (and whatever else the caller sent); only our own
    // keys are read.
    auto args = parse_object(arguments_json);
    if (!args) return done.fail(invalid_arguments("arguments must be a JSON object"));
    if (tool_id == "echo_reverse") return reverse(*args, std::move(done));
    if (tool_id == "echo_fail") return fail(*args, std::move(done));
    if (tool_id == "echo_send_message") return send_message(*args, std::move(done));
    sleep(*args, std::move(done));
  }

  void auth_start(std::string_view connector_channel_id, std::string_view flow_id, std::string_view auth_session_id,
                  std::string_view input_json, completion done) override {
    answer(connector_channel_id, flow_id, auth_.start(connector_channel_id, flow_id, auth_session_id, input_json),
           std::move(done));
  }

  void auth_status(std::string_view connector_channel_id, std::string_view flow_id, std::string_view auth_session_id,
                   bool refresh, completion done) override {
    answer(connector_channel_id, flow_id, auth_.status(connector_channel_id, flow_id, auth_session_id, refresh),
           std::move(done));
  }

  void auth_cancel(std::string_view connector_channel_id, std::string_view, std::string_view auth_session_id,
                   completion done) override {
    auth_.cancel(connector_channel_id, auth_session_id);
    done.ok();
  }

  void auth_logout(std::string_view connector_channel_id, completion done) override {
    auth_.logout(connector_channel_id);
    host_.info("channel " + std::string(connector_channel_id) + " signed out");
    done.ok();
  }

 private:
  static void reverse(const json::object& args, completion done) {
    const json::string* text = string_at(args, "text");
    if (!text) return done.fail(invalid_arguments("text: must be a string"));
    auto reversed = reverse_code_points(*text);
    if (!reversed) return done.fail(invalid_arguments("text: must be valid UTF-8"));
    done.ok(json::serialize(json::object{{"text", *reversed}}));
  }

  static void fail(const json::object& args, completion done) {
    const json::string* code = string_at(args, "code");
    if (!code || !is_stable_code(*code)) {
      return done.fail(invalid_arguments("code: must match ^[a-z0-9_.-]{1,64}$"));
    }
    done.fail({std::string(*code), "echo_fail fails by design", false});
  }

  static void send_message(const json::object& args, completion done) {
    const json::string* text = string_at(args, "text");
    if (!text) return done.fail(invalid_arguments("text: must be a string"));
    // The far side's reply (an inbound message from echo-peer) needs the host's emit service, not in ABI 1.0 yet.
    done.ok(json::serialize(json::object{{"status", "sent"}, {"message_id", "echo_msg_" + random_token()}}));
  }

  // Logs a sign-in by its display-level hint only; the answer itself was built without the credential.
  void answer(std::string_view connector_channel_id, std::string_view flow_id, const auth_outcome& outcome,
              completion done) {
    if (const auto* failure = std::get_if<error>(&outcome)) return done.fail(*failure);
    const auto& reply = std::get<auth_answer>(outcome);
    if (reply.binding) {
      host_.info("channel " + std::string(connector_channel_id) + " signed in with " + std::string(flow_id) + " as " +
                 reply.binding->account_hint);
    }
    done.ok(reply.to_json());
  }

  void sleep(const json::object& args, completion done) {
    auto ms = integer_in(args.if_contains("ms"), 0, sleep_limit_ms);
    if (!ms) return done.fail(invalid_arguments("ms: must be an integer 0..600000"));
    sleeps_.schedule(std::chrono::milliseconds(*ms), json::serialize(json::object{{"slept_ms", *ms}}),
                     std::move(done));
  }

  xconn::sdk::host host_;
  std::int64_t sent_log_max_ = sent_log_max_default;
  delay_queue sleeps_;
  auth_flows auth_;
};

}  // namespace
}  // namespace echo

XCONN_PLUGIN(echo::echo_plugin)
