// Echo's two sign-in flows as a state machine over an injected clock and randomness, with no I/O, so every
// step (QR expiry to the millisecond included) is unit-tested (docs/plugin-contract.md, "The reference plugin echo").
// Thread-safe: calls for different channels run concurrently on the host's plugin pool.
#pragma once

#include "sha256_hex.hpp"

#include <xconn/plugin.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace echo {

inline constexpr std::string_view token_flow_id = "echo_token";
inline constexpr std::string_view qr_flow_id = "echo_qr_login";
inline constexpr std::int64_t qr_lifetime_ms = 120000;
inline constexpr std::int64_t qr_poll_interval_ms = 1000;
// An abandoned QR session is forgotten this long after its code expired; the host keeps its own record.
inline constexpr std::int64_t qr_retention_ms = 600000;
// Bounds memory against a client that starts sign-ins and never finishes them.
inline constexpr std::size_t max_qr_sessions = 10000;
inline constexpr std::string_view display_name = "Echo user";

// The channel's target identity at display level (plugin.h, "binding").
struct auth_binding {
  std::string display_name;
  std::string account_hint;
  bool operator==(const auth_binding&) const = default;
};

// One auth answer as plugin.h defines it; an empty or unset field stays out of the JSON.
struct auth_answer {
  std::string status;
  std::string qr_code_text;
  std::optional<std::int64_t> expires_at;
  std::optional<std::int64_t> poll_interval_millis;
  std::string message;
  std::optional<auth_binding> binding;
  // Not on the wire. Set when this answer signed the channel in: the shared consumer the channel now holds ("" for
  // none). Unset when the channel's sign-in did not change (a pending run, a repeated poll of a finished QR run).
  std::optional<std::string> consumer_key = std::nullopt;

  std::string to_json() const {
    boost::json::object out{{"status", status}};
    if (!qr_code_text.empty()) out["qr_code_text"] = qr_code_text;
    if (expires_at) out["expires_at"] = *expires_at;
    if (poll_interval_millis) out["poll_interval_millis"] = *poll_interval_millis;
    if (!message.empty()) out["message"] = message;
    if (binding) {
      out["binding"] = boost::json::object{{"display_name", binding->display_name},
                                           {"account_hint", binding->account_hint}};
    }
    return boost::json::serialize(out);
  }
};

using auth_outcome = std::variant<auth_answer, xconn::sdk::error>;

// "echo-" + the first 6 hex digits of an HMAC of the token keyed by a secret of the store (identity_key): tells two
// tokens apart without revealing either, and gives no bare hash anyone could check a guessed token against.
inline std::string token_account_hint(std::string_view identity_key, std::string_view token) {
  return "echo-" + hmac_sha256_hex(identity_key, "hint\n" + std::string(token)).substr(0, 6);
}

// The shared consumer of every channel signed in with the token ("Channels with the same token share one shared
// consumer"): "token-" + 16 hex digits of another HMAC of it. It names the credential for the host's counts and
// logs without being it. A QR sign-in holds no consumer: echo's QR identity is the channel's own, with no
// credential another channel could share, so a reference count on it would always be 1 and say nothing.
inline std::string token_consumer_key(std::string_view identity_key, std::string_view token) {
  return "token-" + hmac_sha256_hex(identity_key, "consumer\n" + std::string(token)).substr(0, 16);
}

class auth_flows {
 public:
  using clock_fn = std::function<std::int64_t()>;  // now, in unix milliseconds
  using random_fn = std::function<std::string()>;  // an unguessable token, for the QR code

  // Until set_identity_key, a key of this run alone (hints and consumer keys then change with every start).
  auth_flows(clock_fn now_ms, random_fn random)
      : now_ms_(std::move(now_ms)), random_(std::move(random)), identity_key_(run_key()) {}

  // The secret the token's hint and consumer key are keyed by: kept in the store, the same after a restart.
  void set_identity_key(std::string key) {
    std::lock_guard lock(mutex_);
    identity_key_ = std::move(key);
  }

  // The host's consumer key for material (host.consumer_key, ABI 1.5): keyed by the sealing key, which is not in the
  // store as identity_key is. Unset, or "" from it (an older host): the identity_key HMAC.
  void set_consumer_key_maker(std::function<std::string(std::string_view material)> maker) {
    std::lock_guard lock(mutex_);
    consumer_key_maker_ = std::move(maker);
  }

  // input_json is the form input (the host has checked it against the card); a QR flow ignores it.
  auth_outcome start(std::string_view channel, std::string_view flow_id, std::string_view session_id,
                     std::string_view input_json) {
    if (flow_id == token_flow_id) return sign_in_with_token(channel, input_json);
    if (flow_id != qr_flow_id) return xconn::sdk::error{"auth_flow_not_found", "echo has no such auth flow", false};
    std::lock_guard lock(mutex_);
    std::int64_t now = now_ms_();
    std::erase_if(qr_sessions_, [&](const auto& s) { return now >= s.second.expires_at + qr_retention_ms; });
    if (qr_sessions_.size() >= max_qr_sessions && !qr_sessions_.contains(std::string(session_id))) {
      return xconn::sdk::error{"too_many_auth_sessions", "too many sign-ins in progress; try again later", true};
    }
    qr_session& session = qr_sessions_[std::string(session_id)];
    session.channel = channel;
    issue_qr(session, now);
    return pending(session);
  }

  // Each poll of a live code advances it: pending -> scanned -> authenticated. refresh issues a new code.
  auth_outcome status(std::string_view channel, std::string_view flow_id, std::string_view session_id,
                      bool refresh) {
    std::lock_guard lock(mutex_);
    auto it = qr_sessions_.find(session_id);
    if (flow_id != qr_flow_id || it == qr_sessions_.end() || it->second.channel != channel) {
      return xconn::sdk::error{"auth_session_not_found", "echo knows no such auth session", false};
    }
    qr_session& session = it->second;
    std::int64_t now = now_ms_();
    if (session.authenticated) return authenticated(qr_binding());
    if (refresh) {
      issue_qr(session, now);
      return pending(session);
    }
    if (now >= session.expires_at) {
      // The run goes on with a new code (the host asks for it at once); only the code is stale.
      return auth_answer{"qr_refresh_required", "", session.expires_at, std::nullopt, "The QR code expired; refresh it.",
                         {}};
    }
    if (++session.scans == 1) {
      return auth_answer{"scanned", "", session.expires_at, qr_poll_interval_ms, "Scanned; confirm on your device.",
                         {}};
    }
    session.authenticated = true;
    logins_[session.channel] = qr_binding();
    auth_answer signed_in = authenticated(qr_binding());
    signed_in.consumer_key = "";  // replaces a token sign-in of the channel, and holds no consumer of its own
    return signed_in;
  }

  // Abandons one run; the channel's login, if any, stays.
  void cancel(std::string_view channel, std::string_view session_id) {
    std::lock_guard lock(mutex_);
    auto it = qr_sessions_.find(session_id);
    if (it != qr_sessions_.end() && it->second.channel == channel) qr_sessions_.erase(it);
  }

  // Forgets the channel's login and its runs still in progress. Idempotent.
  void logout(std::string_view channel) {
    std::lock_guard lock(mutex_);
    if (auto it = logins_.find(channel); it != logins_.end()) logins_.erase(it);
    std::erase_if(qr_sessions_, [&](const auto& s) { return s.second.channel == channel; });
  }

  std::optional<auth_binding> login_of(std::string_view channel) const {
    std::lock_guard lock(mutex_);
    auto it = logins_.find(channel);
    if (it == logins_.end()) return std::nullopt;
    return it->second;
  }

  std::size_t qr_session_count() const {
    std::lock_guard lock(mutex_);
    return qr_sessions_.size();
  }

 private:
  struct qr_session {
    std::string channel;
    std::string qr_code_text;
    std::int64_t expires_at = 0;
    int scans = 0;
    bool authenticated = false;
  };

  // Nothing of the token leaves this function but keyed digests of it: not in an answer, an error or a log line.
  auth_outcome sign_in_with_token(std::string_view channel, std::string_view input_json) {
    boost::json::error_code ec;
    boost::json::value input = boost::json::parse(input_json, ec);
    const boost::json::value* token = !ec && input.is_object() ? input.as_object().if_contains("token") : nullptr;
    if (token == nullptr || !token->is_string() || token->as_string().empty()) {
      return xconn::sdk::error{"invalid_input", "input.token: required", false};
    }
    if (token->as_string() == "invalid") {
      return xconn::sdk::error{"invalid_credentials", "Echo refused the token.", false};
    }
    std::lock_guard lock(mutex_);
    auth_binding binding{std::string(display_name), token_account_hint(identity_key_, token->as_string())};
    std::string consumer = token_consumer_key(identity_key_, token->as_string());
    if (auto by_host = consumer_key_maker_ ? consumer_key_maker_("consumer\n" + std::string(token->as_string())) : "";
        !by_host.empty())
      consumer = "token-" + by_host;
    logins_[std::string(channel)] = binding;
    auth_answer signed_in = authenticated(std::move(binding));
    signed_in.consumer_key = std::move(consumer);
    return signed_in;
  }

  void issue_qr(qr_session& session, std::int64_t now) {
    session.qr_code_text = "echo-qr:" + random_();
    session.expires_at = now + qr_lifetime_ms;
    session.scans = 0;
  }

  static auth_answer pending(const qr_session& session) {
    return {"pending", session.qr_code_text, session.expires_at, qr_poll_interval_ms,
            "Scan the QR code with Echo to sign in.", {}};
  }

  static auth_binding qr_binding() { return {std::string(display_name), "echo-qr"}; }

  static auth_answer authenticated(auth_binding binding) {
    return {"authenticated", "", std::nullopt, std::nullopt, "Signed in to Echo.", std::move(binding)};
  }

  // 32 bytes from the system's random source (as hex): the key until set_identity_key.
  static std::string run_key() {
    std::random_device source;
    std::string key;
    for (int i = 0; i < 8; ++i) key += hmac_sha256_hex("run", std::to_string(source())).substr(0, 8);
    return key;
  }

  clock_fn now_ms_;
  random_fn random_;
  std::string identity_key_;  // guarded by mutex_
  std::function<std::string(std::string_view)> consumer_key_maker_;  // guarded by mutex_
  mutable std::mutex mutex_;
  std::map<std::string, qr_session, std::less<>> qr_sessions_;  // by the host's auth_session_id
  std::map<std::string, auth_binding, std::less<>> logins_;     // by connector_channel_id
};

}  // namespace echo
