// The network adapter base through a real host table: start runs work on the adapter's own thread, host services
// come back as awaitables on it, an escaped exception is logged with the adapter's name, and stop answers every call
// still in flight (plugin_dropped_call, retryable) and ignores host answers that come after it.
#include "recording_host.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace {

using xconn::adapter_test::exposed_adapter;
using xconn::adapter_test::recording_host;
using namespace std::chrono_literals;
template <class T>
using awaitable = boost::asio::awaitable<T>;

awaitable<void> answer_on_thread(std::thread::id caller, xconn::sdk::completion done) {
  done.ok(std::this_thread::get_id() != caller ? R"({"thread":"own"})" : R"({"thread":"caller"})");
  co_return;
}

TEST(network_adapter, runs_spawned_work_on_its_own_thread_after_start) {
  recording_host host;
  exposed_adapter adapter(host.host());
  auto& call = host.new_call();
  adapter.spawn(answer_on_thread(std::this_thread::get_id(), host.completion_for(call)));
  auto& started = host.new_call();
  adapter.start(host.completion_for(started));
  ASSERT_TRUE(host.wait_done(call));
  EXPECT_EQ(call.call.json, R"({"thread":"own"})");
  EXPECT_EQ(started.call.status, XCONN_STATUS_OK);
}

awaitable<void> throws() {
  throw std::runtime_error("the target spoke nonsense");
  co_return;
}

TEST(network_adapter, logs_an_escaped_exception_with_its_name) {
  recording_host host;
  exposed_adapter adapter(host.host());
  adapter.start(host.completion_for(host.new_call()));
  adapter.spawn(throws());
  EXPECT_TRUE(host.wait_for([](recording_host& h) {
    return !h.logs_.empty() && h.logs_.back() == "exposed: the target spoke nonsense";
  }));
}

awaitable<void> emit_then_answer(exposed_adapter& a, xconn::sdk::completion done) {
  auto r = co_await a.emit("ch1", R"({"text":"hi"})");
  auto kept = co_await a.kv_write(xconn::sdk::kv_batch().put("cursor", "7"));
  done.ok(std::string(R"({"id":")") + r.message_id + "\",\"kept\":" + (kept.ok ? "true" : "false") + "}");
}

TEST(network_adapter, awaits_host_services_answered_from_another_thread) {
  recording_host host;
  exposed_adapter adapter(host.host());
  adapter.start(host.completion_for(host.new_call()));
  auto& call = host.new_call();
  adapter.spawn(emit_then_answer(adapter, host.completion_for(call)));
  ASSERT_TRUE(host.wait_for([](recording_host& h) { return h.held_.size() == 1; }));
  std::thread([&] { host.answer_next(); }).join();
  ASSERT_TRUE(host.wait_for([](recording_host& h) { return h.kv_ops_.size() == 1; }));
  std::thread([&] { host.answer_next(); }).join();
  ASSERT_TRUE(host.wait_done(call));
  EXPECT_EQ(call.call.json, R"({"id":"m1","kept":true})");
  EXPECT_EQ(host.read([](recording_host& h) { return h.emits_; }), std::vector<std::string>{R"(ch1 {"text":"hi"})"});
}

TEST(network_adapter, a_host_answer_after_stop_answers_the_call_as_dropped_without_resuming) {
  recording_host host;
  exposed_adapter adapter(host.host());
  adapter.start(host.completion_for(host.new_call()));
  auto& call = host.new_call();
  adapter.spawn(emit_then_answer(adapter, host.completion_for(call)));
  ASSERT_TRUE(host.wait_for([](recording_host& h) { return h.held_.size() == 1; }));
  auto& stopped = host.new_call();
  adapter.stop(host.completion_for(stopped));
  EXPECT_EQ(stopped.call.status, XCONN_STATUS_OK);
  EXPECT_EQ(adapter.halting.load(), 1);
  EXPECT_EQ(adapter.halted.load(), 1);
  // The frame waits on the host's callback; the host answers after stop, from its own thread: the frame is
  // destroyed, not resumed on a stopped loop (no kv write follows), and its completion answers the call.
  std::thread([&] { host.answer_next(); }).join();
  ASSERT_TRUE(host.done(call));
  EXPECT_EQ(call.call.completions, 1);
  EXPECT_EQ(call.call.status, XCONN_STATUS_ERROR);
  EXPECT_NE(call.call.json.find("plugin_dropped_call"), std::string::npos);
  EXPECT_NE(call.call.json.find("\"retryable\":true"), std::string::npos);
  EXPECT_TRUE(host.read([](recording_host& h) { return h.kv_ops_.empty(); }));
}

awaitable<void> pause_then_answer(exposed_adapter& a, xconn::sdk::completion done) {
  co_await a.pause(std::chrono::hours(1));
  done.ok();
}

TEST(network_adapter, stop_answers_a_call_whose_frame_waits_on_the_loop) {
  recording_host host;
  exposed_adapter adapter(host.host());
  adapter.start(host.completion_for(host.new_call()));
  auto& call = host.new_call();
  adapter.spawn(pause_then_answer(adapter, host.completion_for(call)));
  adapter.stop(host.completion_for(host.new_call()));
  ASSERT_TRUE(host.done(call));  // before stop returned
  EXPECT_NE(call.call.json.find("plugin_dropped_call"), std::string::npos);
}

TEST(network_adapter, work_spawned_after_stop_is_dropped_and_its_call_answered) {
  recording_host host;
  exposed_adapter adapter(host.host());
  adapter.start(host.completion_for(host.new_call()));
  adapter.stop(host.completion_for(host.new_call()));
  auto& call = host.new_call();
  adapter.spawn(answer_on_thread(std::this_thread::get_id(), host.completion_for(call)));
  ASSERT_TRUE(host.done(call));
  EXPECT_NE(call.call.json.find("plugin_dropped_call"), std::string::npos);
  adapter.stop(host.completion_for(host.new_call()));  // again: nothing more to halt
  EXPECT_EQ(adapter.halted.load(), 1);
}

TEST(network_adapter, destruction_without_start_answers_queued_calls) {
  recording_host host;
  auto& call = host.new_call();
  {
    exposed_adapter adapter(host.host());
    adapter.spawn(answer_on_thread(std::this_thread::get_id(), host.completion_for(call)));
  }
  ASSERT_TRUE(host.done(call));
  EXPECT_NE(call.call.json.find("plugin_dropped_call"), std::string::npos);
}

awaitable<void> paused_report(exposed_adapter& a) {
  auto begun = std::chrono::steady_clock::now();
  co_await a.pause(50ms);
  a.set_channel_status("ch1", "degraded",
                       std::chrono::steady_clock::now() - begun >= 50ms ? "target_unreachable" : "too_early");
}

TEST(network_adapter, pauses_on_its_loop_and_reports_a_channel_with_a_reason) {
  recording_host host;
  exposed_adapter adapter(host.host());
  adapter.start(host.completion_for(host.new_call()));
  adapter.spawn(paused_report(adapter));
  ASSERT_TRUE(host.wait_for([](recording_host& h) { return !h.reports_.empty(); }));
  EXPECT_EQ(host.read([](recording_host& h) { return h.reports_.front(); }),
            R"(ch1 {"status":"degraded","reason":"target_unreachable"})");
}

}  // namespace
