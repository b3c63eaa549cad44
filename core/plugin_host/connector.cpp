#include "core/plugin_host/connector.hpp"

#include "core/base/ids.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace xconn {

namespace {

// A held call that cannot wait longer is answered as the plugin failing it, retryable (docs/protocol.md "Hot reload").
call_result not_run(const std::string& what, std::string_view why, std::string_view code) {
  call_result r;
  r.code = !code.empty() ? std::string(code) : what == "tool" ? "tool_invoke_failed" : what + "_failed";
  r.message = std::string(why);
  r.retryable = true;
  return r;
}

long long ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

connector::connector(std::string id, const plugins_config& limits, boost::asio::io_context& io,
                     boost::asio::thread_pool& pool)
    : id_(std::move(id)),
      max_held_(static_cast<std::size_t>(limits.reload_pause_max_calls)),
      max_pause_(limits.reload_pause_max_s),
      inline_budget_(limits.inline_budget_us),
      io_(io),
      pool_(pool) {}

void connector::call_async(std::string what, plugin_fn fn, const strand& on, std::chrono::milliseconds timeout,
                           std::function<void(call_result)> done) {
  std::unique_lock lock(mutex_);
  auto serving = current_.load();
  if (retired_ || !serving) {
    lock.unlock();
    return fail_later(what, std::move(done), "the connector is not loaded", "unknown_connector");
  }
  if (!paused_) {
    // Counted in flight under the lock, so a reload that pauses right after waits for this call; dispatched
    // after it, so that waking a pool thread never holds up the other I/O threads.
    serving->begin_call();
    lock.unlock();
    serving->dispatch_call(std::move(what), std::move(fn), on, timeout, std::move(done));
    return;
  }
  if (overdue_ || held_.size() >= max_held_) {
    ++failed_while_paused_;
    lock.unlock();
    return fail_later(what, std::move(done), "the connector is being reloaded; retry");
  }
  held_.push_back({std::move(what), std::move(fn), on, timeout, std::move(done), std::chrono::steady_clock::now()});
}

namespace {

// What a hook the plugin's table lacks answers instead (plugin.h marks which hooks are Optional).
struct absent_answer {
  xconn_status status;
  std::string_view json;
};
constexpr absent_answer nothing_to_do{XCONN_STATUS_OK, "{}"};
constexpr absent_answer shown_connected{XCONN_STATUS_OK, R"({"status":"connected"})"};
constexpr absent_answer cannot_send{
    XCONN_STATUS_ERROR, R"({"code":"not_supported","message":"this plugin cannot send messages","retryable":false})"};
constexpr absent_answer no_http{
    XCONN_STATUS_OK, R"({"status":501,"content_type":"application/json","body":"{\"error\":\"not_implemented\"}"})"};
constexpr absent_answer no_auth{
    XCONN_STATUS_ERROR, R"({"code":"not_supported","message":"this plugin has no auth flows","retryable":false})"};
constexpr absent_answer no_tools{
    XCONN_STATUS_ERROR, R"({"code":"not_supported","message":"this plugin has no tools","retryable":false})"};

xconn_str abi_arg(const std::string& s) { return {s.data(), s.size()}; }
int abi_arg(bool b) { return b ? 1 : 0; }

// The one shape of every call into the plugin: the hook, checked for NULL, called with the arguments the call
// owns (strings as views, valid until the call returns).
template <class Hook, class... Args>
plugin_generation::plugin_fn call_hook(Hook xconn_plugin_api::*hook, absent_answer absent, Args... args) {
  return [hook, absent, ... args = std::move(args)](const xconn_plugin_api& api, void* instance, xconn_call* call) {
    if (!(api.*hook)) return plugin_generation::complete(call, absent.status, absent.json);
    (api.*hook)(instance, call, abi_arg(args)...);
  };
}

}  // namespace

void connector::invoke_tool(std::string channel_id, std::string tool_id, std::string arguments_json,
                            std::string context_json, const strand& on, ms timeout, done_fn done,
                            plugin_generation::progress_fn progress, boost::asio::any_io_executor answer_on) {
  bool may_run_here = false;
  if (auto m = manifest(); m && answer_on && inline_budget_.count() > 0) {
    auto options = m->tools.find(tool_id);
    may_run_here = options != m->tools.end() && options->second.non_blocking;
  }
  const std::string tool = may_run_here ? tool_id : std::string();
  done = [done = std::move(done), metrics = metrics_, tool_id, start = std::chrono::steady_clock::now()](call_result r) {
    metrics->invoke.observe(std::chrono::steady_clock::now() - start);
    metrics->count_tool(tool_id, r.ok ? call_outcome::ok : r.timed_out ? call_outcome::timeout : call_outcome::error);
    done(std::move(r));
  };
  auto hook = call_hook(&xconn_plugin_api::xconn_plugin_on_invoke_tool, no_tools, std::move(channel_id),
                        std::move(tool_id), std::move(arguments_json), std::move(context_json));
  plugin_fn fn = [hook = std::move(hook), progress = std::move(progress), answer_on = std::move(answer_on)](
                     const xconn_plugin_api& api, void* instance, xconn_call* call) {
    if (progress) plugin_generation::attach_progress(call, progress);
    if (answer_on) plugin_generation::answer_on(call, answer_on);
    hook(api, instance, call);
  };
  if (may_run_here && call_here(tool, fn, timeout, done)) return;
  call_async("tool", std::move(fn), on, timeout, std::move(done));
}

// The one exception to "no plugin code on an I/O thread" (docs/architecture.md): a tool its plugin declares
// non_blocking, timed here. A call past the budget is still answered; a tool whose calls overrun this many times
// in a row runs on the pool from then on (one overrun alone is a cold first call or a preempted thread).
constexpr int overruns_to_move = 3;

bool connector::call_here(const std::string& tool, plugin_fn& fn, ms timeout, done_fn& done) {
  std::unique_lock lock(mutex_);
  auto serving = current_.load();
  if (retired_ || !serving || paused_ || moved_to_pool_.contains(tool)) return false;
  serving->begin_call();  // under the lock, as call_async counts it: a reload that pauses now waits for it
  lock.unlock();
  const auto start = std::chrono::steady_clock::now();
  serving->run_call_here("tool", std::move(fn), timeout, std::move(done));
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  inline_calls_.fetch_add(1, std::memory_order_relaxed);
  if (took <= inline_budget_) {
    if (overrun_streaks_.load(std::memory_order_relaxed) == 0) return true;  // the usual case: no lock
    lock.lock();
    if (overrun_streak_.erase(tool)) overrun_streaks_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  inline_overruns_.fetch_add(1, std::memory_order_relaxed);
  lock.lock();
  if (serving != current_.load()) return true;  // another build serves now: its tools start afresh
  auto [streak, first] = overrun_streak_.try_emplace(tool, 0);
  if (first) overrun_streaks_.fetch_add(1, std::memory_order_relaxed);
  if (++streak->second < overruns_to_move) return true;
  overrun_streak_.erase(streak);
  overrun_streaks_.fetch_sub(1, std::memory_order_relaxed);
  moved_to_pool_.insert(tool);
  spdlog::warn("[plugin {}] tool {} is declared non_blocking but {} calls in a row took longer than "
               "plugins.inline_budget_us ({} us; the last {} us): it runs on the plugin pool until the plugin reloads",
               id_, tool, overruns_to_move, inline_budget_.count(), took.count());
  return true;
}

void connector::forget_overruns() {
  moved_to_pool_.clear();
  overrun_streak_.clear();
  overrun_streaks_.store(0, std::memory_order_relaxed);
}

connector::inline_stats connector::inline_tools() const {
  std::lock_guard lock(mutex_);
  return {inline_calls_.load(std::memory_order_relaxed), inline_overruns_.load(std::memory_order_relaxed),
          std::vector<std::string>(moved_to_pool_.begin(), moved_to_pool_.end())};
}

void connector::auth_start(std::string channel_id, std::string flow_id, std::string run_id, std::string input_json,
                           const strand& on, ms timeout, done_fn done) {
  call_async("auth",
             call_hook(&xconn_plugin_api::xconn_plugin_on_auth_start, no_auth, std::move(channel_id),
                       std::move(flow_id), std::move(run_id), std::move(input_json)),
             on, timeout, std::move(done));
}

void connector::auth_status(std::string channel_id, std::string flow_id, std::string run_id, bool refresh,
                            const strand& on, ms timeout, done_fn done) {
  call_async("auth",
             call_hook(&xconn_plugin_api::xconn_plugin_on_auth_status, no_auth, std::move(channel_id),
                       std::move(flow_id), std::move(run_id), refresh),
             on, timeout, std::move(done));
}

void connector::auth_cancel(std::string channel_id, std::string flow_id, std::string run_id, const strand& on,
                            ms timeout, done_fn done) {
  call_async("auth",
             call_hook(&xconn_plugin_api::xconn_plugin_on_auth_cancel, nothing_to_do, std::move(channel_id),
                       std::move(flow_id), std::move(run_id)),
             on, timeout, std::move(done));
}

bool connector::restores_channels() const {
  return current()->library().api->xconn_plugin_on_channel_restore != nullptr;
}

void connector::channel_restore(std::string channel_id, std::string binding_json, std::string credentials_json,
                                const strand& on, ms timeout, done_fn done) {
  call_async("restore",
             call_hook(&xconn_plugin_api::xconn_plugin_on_channel_restore, shown_connected, std::move(channel_id),
                       std::move(binding_json), std::move(credentials_json)),
             on, timeout, std::move(done));
}

void connector::channel_end(std::string channel_id, std::string reason, const strand& on, ms timeout) {
  call_async("channel_end",
             call_hook(&xconn_plugin_api::xconn_plugin_on_channel_end, nothing_to_do, channel_id, std::move(reason)), on,
             timeout, [plugin = id_, channel_id](call_result r) {
               if (!r.ok) spdlog::warn("[plugin {}] end of channel {} not taken ({})", plugin, channel_id, r.code);
             });
}

void connector::auth_logout(std::string channel_id, const strand& on, ms timeout, done_fn done) {
  call_async("logout", call_hook(&xconn_plugin_api::xconn_plugin_on_auth_logout, nothing_to_do, std::move(channel_id)),
             on, timeout, std::move(done));
}

void connector::send(std::string channel_id, std::string reply_json, const strand& on, ms timeout, done_fn done) {
  done = [done = std::move(done), metrics = metrics_, start = std::chrono::steady_clock::now()](call_result r) {
    metrics->send.observe(std::chrono::steady_clock::now() - start);
    done(std::move(r));
  };
  call_async("send",
             call_hook(&xconn_plugin_api::xconn_plugin_on_send, cannot_send, std::move(channel_id),
                       std::move(reply_json)),
             on, timeout, std::move(done));
}

void connector::update(std::string channel_id, std::string message_id, std::string text_so_far, const strand& on,
                       ms timeout, done_fn done) {
  call_async("update",
             call_hook(&xconn_plugin_api::xconn_plugin_on_update, nothing_to_do, std::move(channel_id),
                       std::move(message_id), std::move(text_so_far)),
             on, timeout, std::move(done));
}

void connector::activity(std::string channel_id, std::string status, std::string tool_name, const strand& on,
                         ms timeout, done_fn done) {
  call_async("activity",
             call_hook(&xconn_plugin_api::xconn_plugin_on_activity, nothing_to_do, std::move(channel_id),
                       std::move(status), std::move(tool_name)),
             on, timeout, std::move(done));
}

void connector::http(http_call request, const strand& on, ms timeout, done_fn done) {
  auto older = call_hook(&xconn_plugin_api::xconn_plugin_on_http, no_http, request.method, request.path,
                         request.query, request.body);
  call_async(
      "http",
      [older = std::move(older), r = std::move(request)](const xconn_plugin_api& api, void* instance,
                                                          xconn_call* call) {
        if (!api.xconn_plugin_on_http_request) return older(api, instance, call);
        const xconn_http_request c{sizeof(xconn_http_request), abi_arg(r.method),       abi_arg(r.path),
                                   abi_arg(r.path_param),      abi_arg(r.query),        abi_arg(r.headers_json),
                                   abi_arg(r.body)};
        api.xconn_plugin_on_http_request(instance, call, &c);
      },
      on, timeout, std::move(done));
}

void connector::consumer_stop(std::string consumer_key, const strand& on, ms timeout, done_fn done) {
  call_async("consumer_stop",
             call_hook(&xconn_plugin_api::xconn_plugin_on_consumer_stop, nothing_to_do, std::move(consumer_key)),
             on, timeout, std::move(done));
}

void connector::stop_consumers(const std::vector<std::string>& keys, ms timeout) {
  for (const auto& key : keys) {
    spdlog::info("[plugin {}] consumer {} has no channel left: stopped", id_, key);
    consumer_stop(key, make_strand(), timeout, [plugin = id_, key](call_result r) {
      if (!r.ok) spdlog::warn("[plugin {}] consumer {} did not stop cleanly ({})", plugin, key, r.code);
    });
  }
}

void connector::fail_later(const std::string& what, std::function<void(call_result)> done, std::string_view why,
                           std::string_view code) {
  // done runs on an I/O thread, never inside the caller's call.
  boost::asio::post(io_, [done = std::move(done), r = not_run(what, why, code)]() mutable { done(std::move(r)); });
}

std::shared_ptr<plugin_generation> connector::current() const { return current_.load(); }

std::shared_ptr<const plugin_manifest> connector::manifest() const { return current()->manifest(); }
std::uint64_t connector::generation() const { return current()->number(); }
std::string connector::config_digest() const { return current()->config_digest(); }
health_snapshot connector::health() const { return current()->health(); }

void connector::report_health(health_state h, std::string last_error_code) {
  current()->report_health(h, std::move(last_error_code));
}

void connector::health_changed(const plugin_generation& from, health_state h) {
  if (current().get() == &from && health_listener_) health_listener_(h);
}

void connector::install(std::shared_ptr<plugin_generation> g) {
  std::lock_guard lock(mutex_);
  forget_overruns();
  current_.store(std::move(g));
}

void connector::pause() {
  std::lock_guard lock(mutex_);
  paused_ = true;
  overdue_ = false;
  failed_while_paused_ = 0;
  paused_at_ = std::chrono::steady_clock::now();
  pause_timer_ = std::make_shared<boost::asio::steady_timer>(io_, max_pause_);
  pause_timer_->async_wait([self = shared_from_this(), timer = pause_timer_](boost::system::error_code ec) {
    if (!ec) self->on_pause_deadline();
  });
}

void connector::on_pause_deadline() {
  std::deque<held_call> late;
  {
    std::lock_guard lock(mutex_);
    if (!paused_) return;
    overdue_ = true;
    late.swap(held_);
    failed_while_paused_ += late.size();
  }
  spdlog::warn("[plugin {}] reload still running after {} s: {} held calls fail as retryable", id_,
               max_pause_.count(), late.size());
  for (auto& c : late) c.done(not_run(c.what, "the connector is being reloaded; retry", {}));
}

void connector::resume(std::shared_ptr<plugin_generation> next, reload_record outcome) {
  std::deque<held_call> held;
  std::shared_ptr<plugin_generation> serving;
  health_state before{};
  {
    std::lock_guard lock(mutex_);
    serving = current_.load();
    before = serving ? serving->health().health : health_state::healthy;
    if (next) {
      serving = std::move(next);
      current_.store(serving);
      forget_overruns();  // another build: its tools get their chance again
    }
    paused_ = false;
    overdue_ = false;
    if (pause_timer_) pause_timer_->cancel();
    pause_timer_.reset();
    held.swap(held_);
    outcome.pause_ms = ms_since(paused_at_);
    outcome.held_calls = held.size() + failed_while_paused_;
    outcome.failed_calls = failed_while_paused_;
    for (const auto& c : held) outcome.longest_hold_ms = std::max(outcome.longest_hold_ms, ms_since(c.since));
    if (failed_while_paused_ > 0) outcome.longest_hold_ms = std::max(outcome.longest_hold_ms, outcome.pause_ms);
    outcome.at = unix_ms();
    (outcome.ok ? metrics_->reloads_ok : metrics_->reloads_refused).fetch_add(1, std::memory_order_relaxed);
    if (outcome.ok) metrics_->reload_pause.observe(static_cast<double>(outcome.pause_ms) / 1000.0);
    last_reload_ = std::move(outcome);
    // In order, under the lock: a call arriving now queues behind them on its channel's strand.
    for (auto& c : held) serving->call_async(std::move(c.what), std::move(c.fn), c.on, c.timeout, std::move(c.done));
  }
  auto after = serving->health().health;
  if (after != before && health_listener_) health_listener_(after);
}

void connector::retire() {
  std::deque<held_call> held;
  {
    std::lock_guard lock(mutex_);
    retired_ = true;
    paused_ = false;
    if (pause_timer_) pause_timer_->cancel();
    pause_timer_.reset();
    held.swap(held_);
  }
  for (auto& c : held) fail_later(c.what, std::move(c.done), "the connector was removed", "unknown_connector");
}

bool connector::paused() const {
  std::lock_guard lock(mutex_);
  return paused_;
}

bool connector::retired() const {
  std::lock_guard lock(mutex_);
  return retired_;
}

void connector::note_reload(reload_record outcome) {
  outcome.at = unix_ms();
  (outcome.ok ? metrics_->reloads_ok : metrics_->reloads_refused).fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  last_reload_ = std::move(outcome);
}

std::optional<reload_record> connector::last_reload() const {
  std::lock_guard lock(mutex_);
  return last_reload_;
}

}  // namespace xconn
