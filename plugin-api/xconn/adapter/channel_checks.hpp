// The life cycle of a restored channel, the rule every adapter follows (docs/adapters.md): shown connected only once
// the target took its credentials again, revoked (or expired) only when the target refused them. While the target
// does not answer, the restore answers degraded (reason target_unreachable), the health board shows the trouble
// under "checks", and the channel is checked again 1 s, 2 s, 4 s ... at most 60 s apart until the target answers;
// the later status is pushed with set_channel_status. The adapter supplies verify(channel), which asks the target
// (its credentials are the adapter's to keep), and on_verified(channel), which binds the channel.
#pragma once

#include <xconn/adapter/health_board.hpp>
#include <xconn/adapter/network_adapter.hpp>
#include <xconn/adapter/retry_backoff.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace xconn::adapter {

// What the target said of a channel's credentials.
enum class check_verdict {
  accepted,
  refused,      // the target refused them for good: revoked
  expired,      // nothing left to check with (no credential kept): expired
  unreachable,  // no answer, a 5xx, a rate limit: asked again
};

class channel_checks {
 public:
  using verify_fn = std::function<boost::asio::awaitable<check_verdict>(const std::string& channel)>;
  using verified_fn = std::function<void(const std::string& channel)>;

  // adapter and health outlive this; verify runs on the adapter's loop.
  channel_checks(network_adapter& adapter, health_board& health, verify_fn verify, verified_fn on_verified)
      : adapter_(adapter), health_(health), verify_(std::move(verify)), on_verified_(std::move(on_verified)) {}

  // The report a restore answers with (xconn::sdk::channel_report): connected after on_verified, revoked or
  // expired, or degraded with target_unreachable while the checks go on in the background.
  boost::asio::awaitable<std::string> restore(std::string channel) {
    auto verdict = co_await verify_(channel);
    if (verdict == check_verdict::accepted) {
      forget(channel);
      on_verified_(channel);
      co_return xconn::sdk::channel_report("connected");
    }
    if (verdict != check_verdict::unreachable) {
      forget(channel);
      co_return xconn::sdk::channel_report(refusal(verdict));
    }
    auto run = start_checking(channel);
    adapter_.spawn(check_again(channel, run));
    co_return xconn::sdk::channel_report("degraded", "target_unreachable");
  }

  // The channel signed out, ended or was signed in anew: its checks stop.
  void forget(const std::string& channel) {
    bool none_left = false;
    {
      std::lock_guard lock(mutex_);
      if (!pending_.erase(channel)) return;
      none_left = pending_.empty();
    }
    if (none_left) health_.set("checks", "");
  }

  // Whether the channel waits for the target to answer its check (its replies are refused retryable meanwhile).
  bool awaiting(const std::string& channel) const {
    std::lock_guard lock(mutex_);
    return pending_.contains(channel);
  }

 private:
  static const char* refusal(check_verdict v) { return v == check_verdict::expired ? "expired" : "revoked"; }

  // The channel's checks are pending (replacing earlier ones); the run that owns them.
  std::uint64_t start_checking(const std::string& channel) {
    std::uint64_t run = 0;
    {
      std::lock_guard lock(mutex_);
      run = ++runs_;
      pending_[channel] = run;
    }
    health_.set("checks", "target_unreachable");
    return run;
  }
  bool still_owned(const std::string& channel, std::uint64_t run) const {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(channel);
    return it != pending_.end() && it->second == run;
  }

  // Ends when the target answers, or the channel is forgotten or restored anew.
  boost::asio::awaitable<void> check_again(std::string channel, std::uint64_t run) {
    retry_backoff backoff;
    for (;;) {
      co_await adapter_.pause(backoff.next());
      if (!still_owned(channel, run)) co_return;
      auto verdict = co_await verify_(channel);
      if (!still_owned(channel, run) || verdict == check_verdict::unreachable) {
        if (still_owned(channel, run)) continue;
        co_return;
      }
      forget(channel);
      if (verdict == check_verdict::accepted) {
        on_verified_(channel);
        adapter_.set_channel_status(channel, "connected");
        adapter_.host().info(adapter_.name() + ": a restored channel was checked once the target answered again");
      } else {
        adapter_.set_channel_status(channel, refusal(verdict));
      }
      co_return;
    }
  }

  network_adapter& adapter_;
  health_board& health_;
  verify_fn verify_;
  verified_fn on_verified_;
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> pending_;  // channel -> the run checking it
  std::uint64_t runs_ = 0;
};

}  // namespace xconn::adapter
