// What an AIOS event record costs on the message path (core/events/event_log.hpp): one inbound message with one
// attachment recorded into a full log (the steady state: the oldest record drops for each new one), against the
// baseline of only building and serializing the same two JSON records, measured in the same run. The difference is
// the log itself: its lock, its seq, its ring of 1,000 and the reservation renewed every 2,048 records.
#include "bench_store.hpp"
#include "core/events/event_log.hpp"

#include <benchmark/benchmark.h>
#include <boost/json.hpp>

namespace {
namespace json = boost::json;

const std::vector<xconn::attachment_summary> one_file{{"fr_0123456789abcdefghijkl", "image/png", 48213}};

void BM_message_record_json_only(benchmark::State& state) {
  for (auto _ : state) {
    json::object message{{"seq", 1},         {"event_type", "message"},     {"timestamp", "2026-12-06T05:00:00.000Z"},
                         {"channel_type", "dialog"}, {"target", "wechat"},  {"session_id", "cch_0123456789abcdefghijkl"},
                         {"message_id", "msg_0123456789abcdefghijkl"},      {"correlation_id", "msg_0123456789abcdefghijkl"},
                         {"payload", {{"direction", "inbound"}, {"bytes", 120}, {"files", 1}}}};
    json::object attachment = message;
    attachment["payload"] = json::object{{"direction", "inbound"}, {"file_ref", one_file[0].file_ref},
                                         {"mime_type", one_file[0].mime_type}, {"byte_size", one_file[0].byte_size}};
    benchmark::DoNotOptimize(json::serialize(message));
    benchmark::DoNotOptimize(json::serialize(attachment));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_message_record_json_only);

void BM_message_record_into_the_log(benchmark::State& state) {
  xconn::bench::bench_store b({std::string(xconn::event_log::database)});
  xconn::event_log log(*b.store, [](std::string_view) { return std::string("wechat"); });
  log.open("wechat");
  for (std::size_t i = 0; i < xconn::event_log::kept_per_plugin; ++i)
    log.record_message("wechat", "inbound", "cch_0123456789abcdefghijkl", "msg_0123456789abcdefghijkl", "", 120, one_file);
  for (auto _ : state)
    log.record_message("wechat", "inbound", "cch_0123456789abcdefghijkl", "msg_0123456789abcdefghijkl", "", 120, one_file);
  state.SetItemsProcessed(state.iterations());
  b.store->flush();
}
BENCHMARK(BM_message_record_into_the_log);

}  // namespace
