// One reading of a target's HTTP answer, the same in every adapter: 2xx is ok; the statuses the adapter declares
// (401, 403, 404, ...) are refusals with the adapter's own code; 429 is rate_limited with the target's wait (at least
// 1 s); a 5xx, an answer the adapter could not understand and no answer at all are target_unreachable, retryable
// (the outage rule); any other status is the adapter's "otherwise" code, not retryable.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

namespace xconn::adapter {

struct http_outcome {
  enum class kind { ok, refused, rate_limited, unreachable, rejected };
  kind what = kind::ok;
  int status = 0;                    // 0 when no answer came
  std::chrono::seconds wait{0};      // rate_limited: how long the target asked to be left alone
  bool retryable = false;
  std::string code;                  // "" for ok, else the business code to answer with

  bool ok() const { return what == kind::ok; }
};

// What an adapter declares about its target's statuses.
struct outcome_rules {
  std::map<int, std::string> refusals;       // e.g. {401, "connection_not_authenticated"}, {404, "chat_not_found"}
  std::string otherwise = "target_rejected";  // any other 4xx (or 1xx/3xx)
};

// status: the answer's status, 0 when none came. retry_after_s: the target's wait (a header or the body's), < 0 for
// none. understood: false when the body of an answer was not what the target speaks (garbled).
inline http_outcome outcome_of(int status, int retry_after_s, bool understood, const outcome_rules& rules) {
  using k = http_outcome::kind;
  http_outcome out;
  out.status = status;
  if (status == 0 || status >= 500 || (!understood && status != 429 && !rules.refusals.contains(status))) {
    out.what = k::unreachable;
    out.code = "target_unreachable";
    out.retryable = true;
  } else if (status >= 200 && status < 300) {
    out.what = k::ok;
  } else if (auto declared = rules.refusals.find(status); declared != rules.refusals.end()) {
    out.what = k::refused;
    out.code = declared->second;
  } else if (status == 429) {
    out.what = k::rate_limited;
    out.code = "rate_limited";
    out.retryable = true;
    out.wait = std::chrono::seconds(std::max(retry_after_s, 1));
  } else {
    out.what = k::rejected;
    out.code = rules.otherwise;
  }
  return out;
}

}  // namespace xconn::adapter
