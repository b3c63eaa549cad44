// Every JSON answer an adapter gives the host, built in one place so no adapter writes one by hand: auth answers,
// send results, channel reports, tool results, the usual business errors and plugin HTTP answers. The bytes are
// the ones the adapters wrote before (Boost.JSON's serializer, keys in the order plugin.h lists them).
// Header-only; uses Boost.JSON's headers (the plugin compiles its implementation once).
#pragma once

#include <xconn/plugin.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace xconn::adapter {

// The channel's target identity at display level (plugin.h, "binding"): never a credential.
struct target_binding {
  std::string display_name;
  std::string account_hint;
};

// A result object built key by key, in order: answer(...).with("message_id", id).json().
class answer_object {
 public:
  answer_object() = default;
  explicit answer_object(boost::json::object o) : object_(std::move(o)) {}
  // value: anything a JSON value is made of (a string of any kind, a number, a bool, nullptr, a json::value, a
  // container Boost.JSON's value_from takes).
  template <class T>
  answer_object& with(std::string_view key, T&& value) & {
    object_[key] = to_value(std::forward<T>(value));
    return *this;
  }
  template <class T>
  answer_object&& with(std::string_view key, T&& value) && {
    object_[key] = to_value(std::forward<T>(value));
    return std::move(*this);
  }
  std::string json() const { return boost::json::serialize(object_); }
  operator std::string() const { return json(); }  // so done.ok(...) and http answers take it as it is
  const boost::json::object& object() const { return object_; }

 private:
  template <class T>
  static boost::json::value to_value(T&& v) {
    if constexpr (std::is_convertible_v<T&&, std::string_view> && !std::is_same_v<std::decay_t<T>, std::nullptr_t>)
      return boost::json::value(std::string_view(v));
    else if constexpr (std::is_constructible_v<boost::json::value, T&&>)
      return boost::json::value(std::forward<T>(v));
    else
      return boost::json::value_from(std::forward<T>(v));
  }
  boost::json::object object_;
};

// ---- Auth answers (plugin.h on_auth_start) ----

namespace detail {
// {"status":"authenticated","binding":{"display_name","account_hint"}}, as an object to add to.
inline boost::json::object authenticated_object(const target_binding& b) {
  return boost::json::object{
      {"status", "authenticated"},
      {"binding", boost::json::object{{"display_name", b.display_name}, {"account_hint", b.account_hint}}}};
}
}  // namespace detail

inline std::string auth_authenticated(const target_binding& b) {
  return boost::json::serialize(detail::authenticated_object(b));
}

// Signed in with what the run obtained from the target (a QR sign-in's token): the host seals credentials as the
// channel's and hands them back at restore, never showing them (ABI 1.8: check host().c_api()->api_minor first).
inline std::string auth_authenticated(const target_binding& b, const boost::json::object& credentials) {
  auto out = detail::authenticated_object(b);
  out["credentials"] = credentials;
  return boost::json::serialize(out);
}

// A run that is not signed in (yet): {"status": "pending" | "failed" | ...[, "message"]}.
inline std::string auth_state(std::string_view status, std::string_view message = {}) {
  boost::json::object out{{"status", status}};
  if (!message.empty()) out["message"] = message;
  return boost::json::serialize(out);
}
inline std::string auth_pending(std::string_view message = {}) { return auth_state("pending", message); }
// A QR run's state with its code: {"status": "pending" | "scanned", "qr_code_text", "expires_at" (unix ms),
// "poll_interval_millis"}.
inline std::string auth_qr(std::string_view status, std::string_view qr_code_text, std::int64_t expires_at,
                           std::int64_t poll_interval_millis) {
  return boost::json::serialize(boost::json::object{{"status", status},
                                                    {"qr_code_text", qr_code_text},
                                                    {"expires_at", expires_at},
                                                    {"poll_interval_millis", poll_interval_millis}});
}
inline std::string auth_failed(std::string_view message = {}) { return auth_state("failed", message); }

// A sign-in the target refused, answered as an error with its business code (invalid_credentials, ...).
inline sdk::error auth_refused(std::string_view code, std::string_view message, bool retryable = false) {
  return {std::string(code), std::string(message), retryable};
}

// ---- Send results (plugin.h on_send): {"ok", "error", "retryable", "message", "external_key", "verified"} ----

// Delivered; external_key names the target's message when there is one.
inline std::string send_delivered(std::string_view external_key = {}) {
  boost::json::object out{{"ok", true}};
  if (!external_key.empty()) out["external_key"] = external_key;
  return boost::json::serialize(out);
}
// Delivered, saying whether the target confirmed it.
inline std::string send_delivered_verified(bool verified) {
  return boost::json::serialize(boost::json::object{{"ok", true}, {"verified", verified}});
}
// Not delivered: the business code, whether a later try may succeed, and a message when it says more.
inline std::string send_refused(std::string_view code, bool retryable, std::string_view message = {}) {
  boost::json::object out{{"ok", false}, {"error", code}, {"retryable", retryable}};
  if (!message.empty()) out["message"] = message;
  return boost::json::serialize(out);
}
inline std::string send_not_signed_in() { return send_refused("connection_not_authenticated", false); }
inline std::string send_target_unreachable(std::string_view message = {}) {
  return send_refused("target_unreachable", true, message);
}

// ---- Channel reports (plugin.h xconn_host_channel_status, on_channel_restore) ----

using sdk::channel_report;
inline std::string report_connected() { return channel_report("connected"); }
inline std::string report_degraded(std::string_view reason) { return channel_report("degraded", reason); }
inline std::string report_revoked(std::string_view reason = {}) { return channel_report("revoked", reason); }
inline std::string report_expired(std::string_view reason = {}) { return channel_report("expired", reason); }

// ---- Tool results ----

// A tool's result object, empty to start with.
inline answer_object tool_result() { return answer_object(); }
// {"status":"sent", ...}: what a tool that sent something answers, with what it adds after.
inline answer_object tool_sent() { return answer_object(boost::json::object{{"status", "sent"}}); }

// ---- Business errors the adapters share (xconn::sdk::error: code, message, retryable) ----

inline sdk::error not_signed_in() { return {"connection_not_authenticated", "the channel is not signed in", false}; }
inline sdk::error no_such_auth_flow() { return {"auth_flow_not_found", "no such auth flow", false}; }
inline sdk::error no_such_tool() { return {"tool_not_found", "no such tool", false}; }
inline sdk::error binding_not_kept() { return {"store_failed", "the binding could not be kept", true}; }
inline sdk::error target_unreachable(std::string_view message) {
  return {"target_unreachable", std::string(message), true};
}
inline sdk::error invalid_argument(std::string_view message) { return {"invalid_argument", std::string(message), false}; }
inline sdk::error invalid_input(std::string_view message) { return {"invalid_input", std::string(message), false}; }

// ---- Plugin HTTP answers (plugin.h on_http / on_http_request) ----

using sdk::http_answer;

// {"error": {"code", "message"[, "field"]}}, the host's own error shape.
inline std::string http_error_body(std::string_view code, std::string_view message, std::string_view field = {}) {
  boost::json::object e{{"code", code}, {"message", message}};
  if (!field.empty()) e["field"] = field;
  return boost::json::serialize(boost::json::object{{"error", std::move(e)}});
}
// An HTTP answer with that error body; headers_json as for http_answer.
inline std::string http_error(int status, std::string_view code, std::string_view message, std::string_view field = {},
                              std::string_view headers_json = {}) {
  return http_answer(status, http_error_body(code, message, field), "application/json", headers_json);
}
// An HTTP answer whose body is a JSON object.
inline std::string http_json(int status, const answer_object& body, std::string_view headers_json = {}) {
  return http_answer(status, body.json(), "application/json", headers_json);
}
// The headers object {"Retry-After":"<seconds>"} for an answer that asks the caller to come back.
inline std::string retry_after_header(std::int64_t seconds) {
  return boost::json::serialize(boost::json::object{{"Retry-After", std::to_string(seconds)}});
}

}  // namespace xconn::adapter
