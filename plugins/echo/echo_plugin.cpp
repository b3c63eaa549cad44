// The reference plugin echo: its target system lives inside the plugin, so every host path can be exercised
// with no outside service.
#include "attachment_batch.hpp"
#include "base64.hpp"
#include "code_points.hpp"
#include "delay_queue.hpp"
#include "echo_auth.hpp"
#include "echo_manifest.hpp"
#include "echo_values.hpp"
#include "random_id.hpp"
#include "sent_log.hpp"

#include <xconn/plugin.hpp>

#include <boost/json.hpp>
// Boost.JSON compiled into this library (its header-only mode, hidden like every symbol here), so the plugin
// never binds to whatever Boost the host carries. Exactly one translation unit may include this.
#include <boost/json/src.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace echo {
namespace {


constexpr std::int64_t sleep_limit_ms = 600000;
constexpr std::int64_t burst_limit = 10000;
constexpr std::size_t activity_channels_max = 10000;

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

  // The config is validated before create.
  echo_plugin(xconn::sdk::host host, std::string_view config_json)
      : host_(host),
        consumers_supported_(host.c_api()->struct_size >= offsetof(xconn_host_api, xconn_host_consumer_release) +
                                                              sizeof(host.c_api()->xconn_host_consumer_release) &&
                             host.c_api()->xconn_host_consumer_acquire && host.c_api()->xconn_host_consumer_release),
        sent_(sent_log_max_of(config_json)),
        auth_(unix_now_ms, random_token) {}

  void start(completion done) override {
    auth_.set_identity_key(identity_key());
#if XCONN_PLUGIN_API_MINOR >= 5  // echo is also built against older headers (a test fixture): no such call there
    auth_.set_consumer_key_maker([host = host_](std::string_view material) { return host.consumer_key(material); });
#endif
    sleeps_.start();
    host_.info("echo started");
    host_.report_health(XCONN_HEALTH_HEALTHY);
    done.ok();
  }

  // The secret sign-in hints are keyed by, kept in the plugin's key-value store (made on the first start). Without a
  // store (an older host) or when it cannot be kept, one of this run alone: hints then differ after a restart.
  std::string identity_key() {
    auto made = random_token() + random_token();
#if XCONN_PLUGIN_API_MINOR >= 3  // echo is also built against the 1.2 headers (a test fixture): no store there
    if (!host_.has_kv()) return made;
    if (auto kept = host_.kv_get("identity_key"); kept && kept->size() >= 32) return *kept;
    // Not waited for: the answer may need this plugin's own threads. A sign-in before the commit uses the key too.
    host_.kv_write(xconn::sdk::kv_batch().put("identity_key", made), [host = host_](xconn::sdk::kv_result r) {
      if (!r.ok) host.warn("echo: the sign-in hint key could not be kept; hints will differ after a restart");
    });
#endif
    return made;
  }

  // Every consumer stops with the plugin; the host keeps the channels' references for the next start.
  void stop(completion done) override {
    sleeps_.stop();
    {
      std::lock_guard lock(consumers_mutex_);
      live_consumers_.clear();
    }
    host_.info("echo stopped");
    done.ok();
  }

  void invoke_tool(std::string_view connector_channel_id, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view context_json, completion done) override {
    if (tool_id != "echo_reverse" && tool_id != "echo_fail" && tool_id != "echo_sleep" &&
        tool_id != "echo_send_message" && tool_id != "echo_burst") {
      return plugin::invoke_tool(connector_channel_id, tool_id, arguments_json, context_json, std::move(done));
    }
    // The raw arguments also carry connector_channel_id (and whatever else the caller sent); only our own
    // keys are read.
    auto args = parse_object(arguments_json);
    if (!args) return done.fail(invalid_arguments("arguments must be a JSON object"));
    if (tool_id == "echo_reverse") return reverse(*args, std::move(done));
    if (tool_id == "echo_fail") return fail(*args, std::move(done));
    if (tool_id == "echo_send_message") return send_message(connector_channel_id, *args, std::move(done));
    if (tool_id == "echo_burst") return burst(connector_channel_id, *args, std::move(done));
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
    hold_consumer(connector_channel_id, "");
    host_.info("channel " + std::string(connector_channel_id) + " signed out");
    done.ok();
  }

  // Echo delivers at once; a repeated idempotency_key answers the same and is logged once.
  void send(std::string_view connector_channel_id, std::string_view reply_json, completion done) override {
    auto reply = parse_object(reply_json);
    if (!reply) return done.ok(invalid_reply("the reply must be a JSON object"));
    const json::string* key = string_at(*reply, "idempotency_key");
    if (!key || key->empty()) return done.ok(invalid_reply("idempotency_key: must be a non-empty string"));
    const json::value* text = reply->if_contains("text");
    if (text && !text->is_string()) return done.ok(invalid_reply("text: must be a string"));
    std::vector<std::string> file_refs;
    if (const json::value* files = reply->if_contains("files")) {
      if (!files->is_array()) return done.ok(invalid_reply("files: must be an array"));
      for (const json::value& file : files->get_array()) {
        const json::string* ref = file.is_object() ? string_at(file.get_object(), "file_ref") : nullptr;
        if (!ref) return done.ok(invalid_reply("files: every file needs a file_ref string"));
        // A real target uploads the bytes now; echo reads them through the host all the same.
        if (!readable(connector_channel_id, *ref))
          return done.ok(json::serialize(json::object{
              {"ok", false}, {"error", "file_unreadable"}, {"retryable", false}, {"message", "a file could not be read"}}));
        file_refs.emplace_back(*ref);
      }
    }
    std::string message_id(*key);
    sent_.add(message_id, text ? std::string(text->get_string()) : std::string(), std::move(file_refs),
              unix_now_ms());
    done.ok(json::serialize(json::object{{"ok", true}, {"external_key", "echo-" + message_id}, {"verified", true}}));
  }

  // Reads a file of the channel to its end through the host, in pieces.
  bool readable(std::string_view connector_channel_id, std::string_view file_ref) const {
    std::string buffer(64 * 1024, '\0');
    std::uint64_t offset = 0;
    for (;;) {
      auto n = host_.read_file(connector_channel_id, file_ref, offset, buffer.data(), buffer.size());
      if (n < 0) return false;
      if (n == 0) return true;
      offset += static_cast<std::uint64_t>(n);
    }
  }

  // Echo has no screen to show typing on; it keeps each channel's last status as a target's indicator would.
  void activity(std::string_view connector_channel_id, std::string_view status, std::string_view tool_name,
                completion done) override {
    {
      std::lock_guard lock(activity_mutex_);
      std::string channel(connector_channel_id);
      if (activity_.size() >= activity_channels_max && !activity_.contains(channel)) {
        activity_.erase(activity_.begin());
      }
      activity_[channel] = {std::string(status), std::string(tool_name)};
    }
    done.ok();
  }

  // The host saw the last channel reference of the key go. A channel here that signed in with it since (its
  // acquire raced this call) keeps it running: echo checks its own references (the spec's lower layer).
  void consumer_stop(std::string_view consumer_key, completion done) override {
    std::size_t holders = 0;
    bool stopped = false;
    {
      std::lock_guard lock(consumers_mutex_);
      holders = static_cast<std::size_t>(
          std::count_if(holding_.begin(), holding_.end(), [&](const auto& h) { return h.second == consumer_key; }));
      if (holders == 0) stopped = live_consumers_.erase(std::string(consumer_key)) > 0;
    }
    std::string key(consumer_key);
    if (stopped) host_.info("consumer " + key + " stopped");
    if (holders > 0) host_.info("consumer " + key + " kept: " + std::to_string(holders) + " channel(s) here hold it");
    done.ok();
  }

  void http(std::string_view method, std::string_view path, std::string_view query, std::string_view body,
            completion done) override {
    if (method == "GET" && path == "/sent") {
      return done.ok(http_answer(200, json::serialize(json::object{{"sent", sent_.to_json()}})));
    }
    if (method == "POST" && path == "/inject") return inject(body, std::move(done));
    plugin::http(method, path, query, body, std::move(done));
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

  // The peer answers only after the send was reported, as a real one would; its emit failing does not undo the
  // send, so it is logged.
  void send_message(std::string_view connector_channel_id, const json::object& args, completion done) {
    const json::string* text = string_at(args, "text");
    if (!text) return done.fail(invalid_arguments("text: must be a string"));
    std::string message_id = "echo_msg_" + random_token();
    done.ok(json::serialize(json::object{{"status", "sent"}, {"message_id", message_id}}));
    host_.emit(connector_channel_id, peer_message(*text, "reply-" + message_id),
               [host = host_, channel = std::string(connector_channel_id)](const emit_result& result) {
                 if (result.ok) return;
                 host.warn("echo peer reply on channel " + channel + " failed: " + result.failure.code + ": " +
                           result.failure.message);
               });
  }

  // Every emit goes out before any has reported: the host group-commits emits that arrive together.
  void burst(std::string_view connector_channel_id, const json::object& args, completion done) {
    auto count = integer_in(args.if_contains("count"), 1, burst_limit);
    if (!count) return done.fail(invalid_arguments("count: must be an integer 1..10000"));
    const json::string* text = string_at(args, "text");
    if (!text) return done.fail(invalid_arguments("text: must be a string"));
    auto state = std::make_shared<burst_state>(std::move(done), *count);
    const std::string call_id = random_token();
    const std::string prefix = std::string(*text) + " #";
    for (std::int64_t i = 1; i <= *count; ++i) {
      std::string n = std::to_string(i);
      host_.emit(connector_channel_id, peer_message(prefix + n, call_id + "-" + n),
                 [state](const emit_result& result) { state->report(result); });
    }
  }

  // The body is one emit plus connector_channel_id; the host validates the emit's fields, echo passes them on.
  void inject(std::string_view body, completion done) {
    auto request = parse_object(body);
    if (!request) return done.ok(http_error(400, "invalid_json", "the body must be a JSON object"));
    const json::string* channel = string_at(*request, "connector_channel_id");
    if (!channel || channel->empty()) {
      return done.ok(http_error(400, "invalid_request", "connector_channel_id: must be a non-empty string"));
    }
    std::vector<attachment> attachments;
    if (const json::value* files = request->if_contains("files"); files && !files->is_null()) {
      if (!files->is_array()) return done.ok(http_error(400, "invalid_request", "files: must be an array"));
      for (const json::value& file : files->get_array()) {
        const json::object* f = file.if_object();
        const json::string* content = f ? string_at(*f, "content_base64") : nullptr;
        auto bytes = content ? base64_decode(*content) : std::nullopt;
        if (!bytes) return done.ok(http_error(400, "invalid_request", "files: each needs content_base64 (base64)"));
        const json::string* name = string_at(*f, "filename");
        const json::string* mime = string_at(*f, "mime_type");
        attachments.push_back({name ? std::string(*name) : "file", mime ? std::string(*mime) : "", std::move(*bytes)});
      }
    }
    json::object message;
    for (const auto& field : *request) {
      if (field.key() != "connector_channel_id" && field.key() != "files") message.emplace(field.key(), field.value());
    }
    // std::function needs a copyable callable; the completion is move-only.
    auto answer = std::make_shared<completion>(std::move(done));
    // A real target's attachment is fetched at once (its links expire) and stored through the host, then the
    // message names it by file_ref; the host gives xAgent a signed download_url.
    store_attachments(std::string(*channel), attachments,
                      [this, channel = std::string(*channel), message = std::move(message),
                       answer](std::optional<error> failed, json::array refs) mutable {
                        if (failed) return answer->ok(http_error(400, failed->code, failed->message));
                        std::vector<std::string> stored;
                        for (const auto& ref : refs) stored.emplace_back(ref.as_object().at("file_ref").as_string());
                        if (!refs.empty()) message["files"] = std::move(refs);
                        // A refused emit's files are erased by the host. A duplicate (its msg_id taken) stored no
                        // message: only echo knows these refs were this inject's alone (a retried emit may name the
                        // first one's file), so it deletes them before answering.
                        host_.emit(channel, json::serialize(message), [this, answer, channel, stored = std::move(stored)](
                                                                          const emit_result& result) {
                          if (!result.ok) return answer->ok(http_error(400, result.failure.code, result.failure.message));
                          if (result.duplicate) attachment_batch::delete_kept(host_, channel, stored);
                          answer->ok(http_answer(202, json::serialize(json::object{{"status", "accepted"},
                                                                                   {"message_id", result.message_id},
                                                                                   {"duplicate", result.duplicate}})));
                        });
                      });
  }

  // Stores the attachments all or none (attachment_batch.hpp); then gives [{"file_ref"}] (or the first failure).
  void store_attachments(const std::string& channel, const std::vector<attachment>& files,
                         std::function<void(std::optional<error>, json::array)> then) {
    if (files.empty()) return then(std::nullopt, {});
    attachment_batch::store(host_, channel, files,
                            [then = std::move(then)](std::optional<error> failed, std::vector<std::string> items) {
                              if (failed) return then(std::move(failed), {});
                              json::array refs;
                              for (const auto& item_json : items) {
                                auto item = parse_object(item_json);
                                const json::string* ref = item ? string_at(*item, "file_ref") : nullptr;
                                if (!ref) return then(error{"store_failed", "the host gave no file_ref", false}, {});
                                refs.push_back(json::object{{"file_ref", *ref}});
                              }
                              then(std::nullopt, std::move(refs));
                            });
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
    if (reply.consumer_key) hold_consumer(connector_channel_id, *reply.consumer_key);
    done.ok(reply.to_json());
  }

  // The channel signed in anew (or out: key ""): it now holds key and lets go of the one it held before. Host calls
  // run outside the lock. Calls for one channel never overlap (the host's strand), so only other channels race.
  // A refused acquire (an old host, a host without the registry wired) leaves the sign-in itself good.
  void hold_consumer(std::string_view connector_channel_id, const std::string& key) {
    std::string channel(connector_channel_id);
    std::string old;
    {
      std::lock_guard lock(consumers_mutex_);
      if (auto it = holding_.find(channel); it != holding_.end() && it->second != key) {
        old = std::move(it->second);
        holding_.erase(it);
      }
    }
    if (!key.empty()) {
      int holders = consumers_supported_ ? host_.acquire_consumer(channel, key) : -1;
      if (holders < 0) {
        host_.warn("channel " + channel + ": the host refused shared consumer " + key);
      } else {
        std::uint64_t starts = 0;
        {
          std::lock_guard lock(consumers_mutex_);
          holding_[channel] = key;
          // Started when the host counts the first channel, or when a restart kept the host's references but not
          // the running consumer.
          if (live_consumers_.insert(key).second) starts = ++consumer_starts_;
        }
        if (starts > 0) {
          host_.info("consumer " + key + " started (" + std::to_string(holders) + " channel(s); start " +
                     std::to_string(starts) + ")");
        }
      }
    }
    if (!old.empty() && consumers_supported_) host_.release_consumer(channel, old);
  }

  void sleep(const json::object& args, completion done) {
    auto ms = integer_in(args.if_contains("ms"), 0, sleep_limit_ms);
    if (!ms) return done.fail(invalid_arguments("ms: must be an integer 0..600000"));
    sleeps_.schedule(std::chrono::milliseconds(*ms), json::serialize(json::object{{"slept_ms", *ms}}),
                     std::move(done));
  }

  struct channel_activity {
    std::string status;  // "thinking", "tool" or "idle"
    std::string tool_name;
  };

  xconn::sdk::host host_;
  const bool consumers_supported_;  // the host's table carries the shared-consumer calls
  std::mutex consumers_mutex_;
  std::unordered_map<std::string, std::string> holding_;  // channel -> the consumer key it signed in with
  std::set<std::string, std::less<>> live_consumers_;     // started and not stopped
  std::uint64_t consumer_starts_ = 0;                     // how many times a consumer was started
  sent_log sent_;
  delay_queue sleeps_;
  auth_flows auth_;
  std::mutex activity_mutex_;
  std::unordered_map<std::string, channel_activity> activity_;
};

}  // namespace
}  // namespace echo

XCONN_PLUGIN(echo::echo_plugin)
