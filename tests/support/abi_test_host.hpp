// A host for driving a plugin .so through the C ABI alone (xconn/plugin.h), the way xconnd does: it records log
// lines, health reports and emits, answers each emit by policy (at once, or later from other threads), counts
// shared-consumer references per (channel, key) as the host's registry does, and lets a test wait for a call's
// completion with a deadline. plugin_test loads one instance and checks, when the test
// ends, that every call was completed exactly once.
#pragma once

#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS 1
#endif

#include "support/test_support.hpp"

#include <xconn/plugin.h>

#include <boost/dll/shared_library.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <deque>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace xconn::test {

inline xconn_str c_str(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view view(xconn_str s) { return {s.data, s.size}; }

inline boost::dll::shared_library open_plugin(const std::filesystem::path& path) {
  return boost::dll::shared_library(path, boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
}

inline const xconn_plugin_api* entry(const boost::dll::shared_library& lib,
                                     uint32_t host_major = XCONN_PLUGIN_API_MAJOR) {
  return lib.get<const xconn_plugin_api*(uint32_t)>(XCONN_PLUGIN_ENTRY_SYMBOL)(host_major);
}

// A built plugin (by file name in build/plugins) opened for its config checker, called through the C ABI: "" when the
// section is accepted, else the plugin's message.
class plugin_config_check {
 public:
  explicit plugin_config_check(const std::string& file) : lib_(open_plugin(plugin_dir() / file)), api_(entry(lib_)) {}
  std::string operator()(std::string_view section) const {
    std::vector<char> error(256, 'X');
    if (api_->xconn_plugin_on_validate_config({section.data(), section.size()}, error.data(), error.size()) == 0)
      return "";
    return std::string(error.data());
  }
  const xconn_plugin_api* api() const { return api_; }

 private:
  boost::dll::shared_library lib_;
  const xconn_plugin_api* api_;
};

class test_host;

// One call the test started; the plugin sees it as an opaque xconn_call*.
struct test_call {
  explicit test_call(test_host* owner) : host(owner) {}

  test_host* host;
  int completions = 0;
  xconn_status status = XCONN_STATUS_OK;
  std::string json;  // of the first completion

  xconn_call* c_call() { return reinterpret_cast<xconn_call*>(this); }
  boost::json::object result() const { return boost::json::parse(json).as_object(); }
};

// What the host answers one emit with.
struct emit_answer {
  bool ok = true;
  std::string message_id;
  bool duplicate = false;
  std::string code;
  std::string message;
};

inline emit_answer accepted(std::string message_id, bool duplicate = false) {
  return {true, std::move(message_id), duplicate, "", ""};
}
inline emit_answer refused(std::string code, std::string message) {
  return {false, "", false, std::move(code), std::move(message)};
}

struct emitted {
  std::string channel;
  boost::json::object message;
};

// One xconn_host_consumer_acquire or _release the plugin made, with what the host answered.
struct consumer_call {
  bool acquire = true;  // false: release
  std::string channel;
  std::string key;
  int answer = 0;  // acquire: the count (or -1); release: the count left (-1: the channel did not hold it)
};

class test_host {
 public:
  // held: emits wait until release(), which answers them from another thread.
  enum class emit_mode { sync, held };

  // wait_deadline: how long wait() gives a call by default.
  explicit test_host(std::chrono::milliseconds wait_deadline = std::chrono::seconds(10))
      : api_{sizeof(xconn_host_api), XCONN_PLUGIN_API_MAJOR, XCONN_PLUGIN_API_MINOR, this, &log, &report_health,
             &complete, &emit, &consumer_acquire, &consumer_release, &file_begin, &file_write, &file_end, &file_read,
             &kv_get, &kv_scan, &kv_write, &emit_with,                     // 1.3: a key-value store in memory
             nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,         // no other 1.3 service, nor 1.4's, nor 1.5's key
             &file_delete,                                                 // 1.5: deletes a kept file of the channel
             nullptr,                                                      // no 1.6 approval carrier
             nullptr},                                                     // nor 1.7 file info
        wait_deadline_(wait_deadline) {}

  const xconn_host_api* api() const { return &api_; }
  // An older host: its table ends at struct_size (e.g. offsetof(xconn_host_api, xconn_host_file_delete) for 1.5's
  // key but no delete). Before the plugin is created.
  void end_table_at(std::size_t struct_size) { api_.struct_size = static_cast<uint32_t>(struct_size); }

  test_call& new_call() {
    std::lock_guard lock(mutex_);
    return calls_.emplace_back(this);
  }

  bool wait(const test_call& call) { return wait(call, wait_deadline_); }

  bool wait(const test_call& call, std::chrono::milliseconds deadline) {
    std::unique_lock lock(mutex_);
    return completed_.wait_for(lock, deadline, [&] { return call.completions > 0; });
  }

  bool done(const test_call& call) {
    std::lock_guard lock(mutex_);
    return call.completions > 0;
  }

  // The ABI demands exactly one completion per call.
  void expect_each_call_completed_once() {
    std::lock_guard lock(mutex_);
    for (const auto& call : calls_) EXPECT_EQ(call.completions, 1) << call.json;
  }

  void set_mode(emit_mode mode) {
    std::lock_guard lock(mutex_);
    mode_ = mode;
  }

  // policy(i) answers the i-th emit (from 0); the default accepts each as msg_<i+1>.
  void set_policy(std::function<emit_answer(std::size_t)> policy) {
    std::lock_guard lock(mutex_);
    policy_ = std::move(policy);
  }

  std::vector<emitted> emits() {
    std::lock_guard lock(mutex_);
    return emits_;
  }

  std::size_t held() {
    std::lock_guard lock(mutex_);
    return held_.size();
  }

  // Answers the first n held emits (all when n is 0) from `threads` threads at once; returns when all ran.
  void release(std::size_t n = 0, unsigned threads = 1);

  std::vector<std::pair<xconn_log_level, std::string>> logs() {
    std::lock_guard lock(mutex_);
    return logs_;
  }

  // logs() without the levels, for tests that only read the text.
  std::vector<std::string> log_lines() {
    std::vector<std::string> lines;
    for (auto& [level, line] : logs()) lines.push_back(std::move(line));
    return lines;
  }

  std::vector<xconn_health> health() {
    std::lock_guard lock(mutex_);
    return health_;
  }

  std::vector<consumer_call> consumer_calls() {
    std::lock_guard lock(mutex_);
    return consumer_calls_;
  }

  // How many channels hold key now.
  std::size_t consumer_references(std::string_view key) {
    std::lock_guard lock(mutex_);
    auto it = consumer_holders_.find(key);
    return it == consumer_holders_.end() ? 0 : it->second.size();
  }

  // The keys whose last reference went, in order (a host would now call on_consumer_stop for each).
  std::vector<std::string> consumers_at_zero() {
    std::lock_guard lock(mutex_);
    return consumers_at_zero_;
  }

  // A reference the host already holds (restored from its store after a restart), not a call of the plugin.
  void hold_consumer(std::string_view channel, std::string_view key) {
    std::lock_guard lock(mutex_);
    consumer_holders_[std::string(key)].emplace(channel);
  }

  // The host's rule for a consumer key: 1-128 bytes of printable ASCII.
  static bool valid_consumer_key(std::string_view key);

 private:
  struct pending {
    xconn_emit_done done;
    void* user;
    emit_answer answer;
  };

  static void answer(const pending& p);

  static void log(void* ctx, xconn_log_level level, xconn_str text);

  static void report_health(void* ctx, xconn_health health, xconn_str);

  static void complete(xconn_call* c, xconn_status status, xconn_str result);

  static void emit(void* ctx, xconn_str channel, xconn_str message, xconn_emit_done done, void* user);

  static int consumer_acquire(void* ctx, xconn_str channel, xconn_str key);

 public:
  // A file store in memory, keyed by channel and file_ref (the LMDB one runs in the integration tests): what a
  // plugin stores it can read back on the same channel, and nowhere else.
  struct stored_test_file {
    std::string channel, filename, mime_type, bytes;
  };
  std::map<std::string, stored_test_file> files() const {
    std::lock_guard lock(mutex_);
    return files_;
  }
  // The n-th keep from now (1: the next) fails with store_failed, as a store that could not commit it.
  void fail_keep(std::size_t n) {
    std::lock_guard lock(mutex_);
    fail_keep_in_ = n;
  }
  // Every xconn_host_file_delete the plugin made: channel, file_ref and the answer.
  struct file_delete_call {
    std::string channel, file_ref;
    int answer;
  };
  std::vector<file_delete_call> file_deletes() const {
    std::lock_guard lock(mutex_);
    return file_deletes_;
  }
  // The plugin's key-value store (in memory), to seed before the plugin starts or to read after.
  std::map<std::string, std::string> kv() const {
    std::lock_guard lock(mutex_);
    return kv_;
  }
  void set_kv(const std::string& key, const std::string& value) {
    std::lock_guard lock(mutex_);
    kv_[key] = value;
  }

 private:
  static xconn_file_upload* file_begin(void* ctx, xconn_str channel, xconn_str filename, xconn_str mime);
  static int file_write(xconn_file_upload* handle, const void* data, size_t size);
  static void file_end(xconn_file_upload* handle, int keep, xconn_file_done done, void* user);
  static int64_t file_read(void* ctx, xconn_str channel, xconn_str file_ref, uint64_t offset, void* buffer,
                           size_t capacity);
  static int file_delete(void* ctx, xconn_str channel, xconn_str file_ref);

  static void consumer_release(void* ctx, xconn_str channel, xconn_str key);
  static int64_t kv_get(void* ctx, xconn_str key, void* buffer, size_t capacity);
  static size_t kv_scan(void* ctx, xconn_str prefix, xconn_kv_visit visit, void* user);
  static void kv_write(void* ctx, const xconn_kv_op* ops, size_t count, xconn_kv_done done, void* user);
  static void emit_with(void* ctx, xconn_str channel, xconn_str message, const xconn_kv_op* ops, size_t count,
                        xconn_emit_done done, void* user);
  void apply_kv(const xconn_kv_op* ops, size_t count);

  xconn_host_api api_;
  std::chrono::milliseconds wait_deadline_;
  struct test_upload {
    test_host* host;
    stored_test_file file;
  };
  mutable std::mutex mutex_;
  std::map<std::string, stored_test_file> files_;  // by file_ref
  std::size_t files_kept_ = 0;                      // names the next file_ref: a deleted one is never reused
  std::size_t fail_keep_in_ = 0;                    // 0: no keep fails
  std::vector<file_delete_call> file_deletes_;
  std::map<std::string, std::string> kv_;
  std::condition_variable completed_;
  std::deque<test_call> calls_;  // a deque keeps the addresses the plugins hold
  std::vector<std::pair<xconn_log_level, std::string>> logs_;
  std::vector<xconn_health> health_;
  emit_mode mode_ = emit_mode::sync;
  std::function<emit_answer(std::size_t)> policy_;
  std::vector<emitted> emits_;
  std::vector<pending> held_;
  std::vector<consumer_call> consumer_calls_;
  std::map<std::string, std::set<std::string>, std::less<>> consumer_holders_;  // key -> channels
  std::vector<std::string> consumers_at_zero_;
};

// One plugin instance created by load() and stopped and destroyed in TearDown.
class plugin_test : public ::testing::Test {
 protected:
  explicit plugin_test(std::chrono::milliseconds wait_deadline = std::chrono::seconds(10))
      : host_(wait_deadline) {}

  void load(const std::filesystem::path& path, std::string_view config = "{}") {
    lib_ = open_plugin(path);
    api_ = entry(lib_);
    ASSERT_NE(api_, nullptr);
    instance_ = api_->xconn_plugin_on_create(host_.api(), c_str(config));
    ASSERT_NE(instance_, nullptr);
  }

  // A host answers every emit before it lets the plugin go.
  void TearDown() override {
    if (instance_ == nullptr) return;
    host_.release();
    test_call& stop = host_.new_call();
    api_->xconn_plugin_on_stop(instance_, stop.c_call());
    EXPECT_TRUE(host_.wait(stop));
    api_->xconn_plugin_on_destroy(instance_);
    host_.expect_each_call_completed_once();
  }

  test_call& start_call() {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_start(instance_, call.c_call());
    return call;
  }

  test_call& invoke_call(std::string_view tool, std::string_view args, std::string_view channel = "ch-1") {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_invoke_tool(instance_, call.c_call(), c_str(channel), c_str(tool), c_str(args),
                                      c_str("{}"));
    return call;
  }

  // Tells the plugin the last reference of key went, as the host does, and waits for its answer.
  test_call& consumer_stop(std::string_view key) {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_consumer_stop(instance_, call.c_call(), c_str(key));
    EXPECT_TRUE(host_.wait(call)) << "consumer_stop never answered";
    return call;
  }

  // Runs one tool and waits for its answer.
  test_call& invoke(std::string_view tool, std::string_view args, std::string_view channel = "ch-1") {
    test_call& call = invoke_call(tool, args, channel);
    EXPECT_TRUE(host_.wait(call)) << tool << " never answered";
    return call;
  }

  void expect_error(const test_call& call, std::string_view code, bool retryable = false) {
    ASSERT_EQ(call.status, XCONN_STATUS_ERROR) << call.json;
    boost::json::object error = call.result();
    EXPECT_EQ(error.at("code").as_string(), code) << call.json;
    EXPECT_EQ(error.at("retryable").as_bool(), retryable) << call.json;
    EXPECT_FALSE(error.at("message").as_string().empty());
  }

  static std::int64_t unix_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  boost::dll::shared_library lib_;  // declared first: it must outlive the instance
  test_host host_;
  const xconn_plugin_api* api_ = nullptr;
  void* instance_ = nullptr;
};

}  // namespace xconn::test
