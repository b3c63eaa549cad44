// What a Bot API answer at sign-in or at a restore says of the token and the chat. Only Telegram's own refusal is a
// verdict on them: the token (401 Unauthorized; 404 for a malformed one) or the chat (400 "chat not found", 403 the
// bot is not in it). A 5xx, a 429, an answer that is not the Bot API's, or none at all, says only that Telegram
// could not be asked just now: retryable, never a wrong credential (adapters' shared rules).
#pragma once

#include "bot_api.hpp"

#include <xconn/plugin.hpp>

#include <algorithm>
#include <string>

namespace telegram {

enum class verdict { accepted, token_refused, chat_refused, rate_limited, unreachable };

// getMe's answer.
inline verdict token_verdict(const api_reply& r) {
  if (!r.reached()) return verdict::unreachable;
  if (r.ok && r.result.is_object()) return verdict::accepted;
  if (r.http_status == 401 || r.http_status == 404) return verdict::token_refused;
  if (r.http_status == 429) return verdict::rate_limited;
  return verdict::unreachable;
}

// getChat's answer (the token was taken just before).
inline verdict chat_verdict(const api_reply& r) {
  if (!r.reached()) return verdict::unreachable;
  if (r.ok && r.result.is_object()) return verdict::accepted;
  if (r.http_status == 401 || r.http_status == 404) return verdict::token_refused;
  if (r.http_status == 400 || r.http_status == 403) return verdict::chat_refused;
  if (r.http_status == 429) return verdict::rate_limited;
  return verdict::unreachable;
}

inline bool refused(verdict v) { return v == verdict::token_refused || v == verdict::chat_refused; }

// The sign-in refusal of a verdict that is not accepted: {code, message, retryable}. A 429's wait is Telegram's
// retry_after, in the message (the wire's error has no field for it).
inline xconn::sdk::error sign_in_refusal(verdict v, const api_reply& r) {
  switch (v) {
    case verdict::token_refused: return {"invalid_credentials", "Telegram refused the bot token", false};
    case verdict::chat_refused: return {"chat_not_found", "the bot cannot see that chat", false};
    case verdict::rate_limited:
      return {"rate_limited", "Telegram asks to wait " + std::to_string(std::max(1, r.retry_after_s)) + " s", true};
    default:
      return {"target_unreachable", r.reached() ? "Telegram did not answer usefully (HTTP " +
                                                      std::to_string(r.http_status) + "); try again"
                                                : "Telegram did not answer; try again",
              true};
  }
}

// What a failed send or tool call becomes for the host's error code.
inline std::string failure_code_of(const api_reply& r) {
  if (!r.reached()) return "target_unreachable";
  if (r.http_status == 403) return "telegram_forbidden";
  if (r.http_status == 401) return "telegram_unauthorized";
  return r.http_status == 429 ? "rate_limited" : "telegram_" + std::to_string(r.http_status);
}
// Telegram says the bot lost the chat (blocked, removed) or the token: the channel is revoked.
inline bool revokes_channel(const api_reply& r) { return r.http_status == 403 || r.http_status == 401; }
// Whether a send that failed so may be asked again: only when nothing reached the chat yet and Telegram may take it.
inline bool send_retryable(const api_reply& r, bool part_sent) {
  return !part_sent && (!r.reached() || r.http_status == 429 || r.http_status >= 500);
}

}  // namespace telegram
