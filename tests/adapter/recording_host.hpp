// A host for the adapter layer's tests: a real xconn_host_api table of C function pointers that records what the
// plugin calls (logs, health, completions, channel reports, emits, kv writes) and holds each emit's and kv write's
// answer until the test gives it, from the test's thread, as a host thread would.
#pragma once

#include <xconn/adapter/network_adapter.hpp>
#include <xconn/plugin.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace xconn::adapter_test {

struct recorded_call {
  int completions = 0;
  xconn_status status = XCONN_STATUS_OK;
  std::string json;
};

class recording_host {
 public:
  recording_host() {
    api_.struct_size = sizeof(xconn_host_api);
    api_.api_major = XCONN_PLUGIN_API_MAJOR;
    api_.api_minor = XCONN_PLUGIN_API_MINOR;
    api_.host_ctx = this;
    api_.xconn_host_log = [](void* ctx, xconn_log_level, xconn_str text) {
      self(ctx).record([&](recording_host& h) { h.logs_.emplace_back(sdk::from_c(text)); });
    };
    api_.xconn_host_report_health = [](void* ctx, xconn_health health, xconn_str code) {
      self(ctx).record([&](recording_host& h) {
        h.health_.push_back((health == XCONN_HEALTH_HEALTHY ? "healthy:" : "degraded:") + std::string(sdk::from_c(code)));
      });
    };
    api_.xconn_host_complete = [](xconn_call* call, xconn_status status, xconn_str json) {
      auto* c = reinterpret_cast<call_slot*>(call);
      c->owner->record([&](recording_host&) {
        if (c->call.completions++ == 0) {
          c->call.status = status;
          c->call.json = std::string(sdk::from_c(json));
        }
      });
    };
    api_.xconn_host_emit = [](void* ctx, xconn_str channel, xconn_str message, xconn_emit_done done, void* user) {
      self(ctx).record([&](recording_host& h) {
        h.emits_.push_back(std::string(sdk::from_c(channel)) + " " + std::string(sdk::from_c(message)));
        h.held_.push_back([done, user](bool ok) {
          xconn_emit_result r{sizeof(xconn_emit_result), ok ? XCONN_STATUS_OK : XCONN_STATUS_ERROR,
                              sdk::to_c(ok ? "m1" : ""), 0, sdk::to_c(ok ? "" : "store_failed"), sdk::to_c("")};
          done(user, &r);
        });
      });
    };
    api_.xconn_host_kv_write = [](void* ctx, const xconn_kv_op* ops, size_t count, xconn_kv_done done, void* user) {
      self(ctx).record([&](recording_host& h) {
        for (size_t i = 0; i < count; ++i) h.kv_ops_.push_back(std::string(sdk::from_c(ops[i].key)));
        h.held_.push_back([done, user](bool ok) {
          done(user, ok ? XCONN_STATUS_OK : XCONN_STATUS_ERROR, sdk::to_c(ok ? "" : "store_failed"), sdk::to_c(""));
        });
      });
    };
    api_.xconn_host_emit_with = [](void* ctx, xconn_str channel, xconn_str message, const xconn_kv_op* ops,
                                   size_t count, xconn_emit_done done, void* user) {
      for (size_t i = 0; i < count; ++i)
        self(ctx).record([&](recording_host& h) { h.kv_ops_.push_back(std::string(sdk::from_c(ops[i].key))); });
      self(ctx).api_.xconn_host_emit(ctx, channel, message, done, user);
    };
    api_.xconn_host_kv_get = [](void*, xconn_str, void*, size_t) -> int64_t { return -1; };
    api_.xconn_host_channel_status = [](void* ctx, xconn_str channel, xconn_str report) {
      self(ctx).record([&](recording_host& h) {
        h.reports_.push_back(std::string(sdk::from_c(channel)) + " " + std::string(sdk::from_c(report)));
      });
      return 0;
    };
  }

  const xconn_host_api* api() const { return &api_; }
  sdk::host host() const { return sdk::host(&api_); }

  // A call the test hands the plugin; its completion is recorded here.
  struct call_slot {
    recording_host* owner;
    recorded_call call;
  };
  call_slot& new_call() {
    std::lock_guard lock(mutex_);
    return calls_.emplace_back(call_slot{this, {}});
  }
  sdk::completion completion_for(call_slot& slot) {
    return sdk::completion(&api_, reinterpret_cast<xconn_call*>(&slot));
  }

  // Waits (bounded) until pred holds of the records.
  bool wait_for(std::function<bool(recording_host&)> pred, std::chrono::milliseconds deadline = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, deadline, [&] { return pred(*this); });
  }
  bool done(call_slot& slot) {
    std::lock_guard lock(mutex_);
    return slot.call.completions > 0;
  }
  bool wait_done(call_slot& slot) {
    return wait_for([&](recording_host&) { return slot.call.completions > 0; });
  }

  // Answers the oldest held emit or kv write (false when none is held).
  bool answer_next(bool ok = true) {
    std::function<void(bool)> answer;
    {
      std::lock_guard lock(mutex_);
      if (held_.empty()) return false;
      answer = std::move(held_.front());
      held_.pop_front();
    }
    answer(ok);
    return true;
  }

  // Read under the lock (from wait_for's predicate) or once the plugin is quiet.
  std::vector<std::string> logs_, health_, emits_, kv_ops_, reports_;
  std::deque<std::function<void(bool)>> held_;
  std::deque<call_slot> calls_;
  std::mutex mutex_;

  template <class Read>
  auto read(Read r) {
    std::lock_guard lock(mutex_);
    return r(*this);
  }

 private:
  static recording_host& self(void* ctx) { return *static_cast<recording_host*>(ctx); }
  template <class Fn>
  void record(Fn fn) {
    {
      std::lock_guard lock(mutex_);
      fn(*this);
    }
    changed_.notify_all();
  }

  xconn_host_api api_{};
  std::condition_variable changed_;
};

// A network adapter whose protected services the tests reach; counts its on_halted.
class exposed_adapter final : public adapter::network_adapter {
 public:
  explicit exposed_adapter(sdk::host host) : network_adapter(host, "exposed") {}
  ~exposed_adapter() override { halt(); }
  using network_adapter::emit;
  using network_adapter::emit_with;
  using network_adapter::halt;
  using network_adapter::host_call;
  using network_adapter::kv_write;
  using network_adapter::pause;
  using network_adapter::set_channel_status;
  using network_adapter::spawn;
  std::atomic<int> halting{0}, halted{0};

 private:
  void on_halting() override { ++halting; }
  void on_halted() override { ++halted; }
};

}  // namespace xconn::adapter_test
