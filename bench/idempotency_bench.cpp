// The idempotency lookup of a side-effect tool.invoke (tool_calls::run_once: key hash, LMDB read, record parse)
// against a std::unordered_map find of the same caller keys, the floor of any lookup, with the bare store::get
// between them; hits (a replayed ack) and misses (a first call) among 10,000 and 100,000 remembered records.
#include "core/base/ids.hpp"
#include "core/store/store.hpp"
#include "core/channels/tool_calls.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <unistd.h>

namespace {

using xconn::tool_calls;
using xconn::tool_outcome;

const std::string plugin_id = "wechat";
const std::string channel_id = "cch_Ab3dE5gH7jK9mN1pQ3sT5v";
// What a message send answers: the outcome a replay hands back.
const tool_outcome sent{true, R"({"message_id":"wxmsg_5829301847","sent_at":1790000000000,"status":"sent"})", "", ""};

// One store holding `remembered` tool_calls records, in a fresh folder under /tmp, plus the same records in an
// unordered_map. Built once per record count and shared by every benchmark (filling 100,000 takes about a second).
struct remembered_calls {
  std::filesystem::path dir;
  std::unique_ptr<xconn::store> db;
  std::unique_ptr<tool_calls> calls;                        // after db: its destructor flushes into db
  std::vector<std::string> known, unknown;                  // caller keys with and without a record
  std::vector<std::string> known_stored, unknown_stored;    // the same through tool_calls::key_for
  std::unordered_map<std::string, std::string> in_memory;  // caller key -> the stored record

  explicit remembered_calls(std::size_t remembered) {
    char tmpl[] = "/tmp/xconn-idempotency-bench-XXXXXX";
    if (!::mkdtemp(tmpl)) std::abort();
    dir = tmpl;
    auto s = xconn::store::open({dir.string(), 1ull << 30, {std::string(tool_calls::database)}});
    if (!s) std::abort();
    db = std::move(*s);
    calls = std::make_unique<tool_calls>(*db, std::chrono::hours(24));
    for (std::size_t i = 0; i < remembered; ++i) {
      // Keys shaped like xAgent's (a random id per tool call).
      known.push_back(xconn::random_id("idem_"));
      unknown.push_back(xconn::random_id("idem_"));
      known_stored.push_back(tool_calls::key_for(plugin_id, channel_id, known.back()));
      unknown_stored.push_back(tool_calls::key_for(plugin_id, channel_id, unknown.back()));
    }
    // One record through the real path, for the real format; its bytes then go under every other key in large
    // batches (one run_once per record would take seconds to fill 100,000).
    calls->run_once(known_stored[0], [](auto finish) { finish(sent, true); }, [](tool_outcome) {});
    db->flush();
    auto record = db->get(tool_calls::database, known_stored[0]);
    if (!record) std::abort();
    xconn::write_batch batch;
    for (std::size_t i = 0; i < remembered; ++i) {
      batch.put(std::string(tool_calls::database), known_stored[i], *record);
      if (batch.ops.size() == 10000 || i + 1 == remembered) db->write(std::exchange(batch, {}));
      in_memory.emplace(known[i], *record);
    }
    db->flush();
  }
  ~remembered_calls() {
    calls.reset();
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

remembered_calls& remembered(benchmark::State& state) {
  static std::map<std::int64_t, std::unique_ptr<remembered_calls>> by_count;
  auto& f = by_count[state.range(0)];
  if (!f) f = std::make_unique<remembered_calls>(static_cast<std::size_t>(state.range(0)));
  return *f;
}

// The whole lookup as ws_requests.cpp runs it for a tool.invoke with an idempotency key. A hit answers from the
// record without running the tool. A miss registers the call as running and runs the tool; here the tool answers
// at once with an outcome that is not kept (keep = false), so no record is written and the key stays a miss:
// only the lookup's cost is left.
void tool_calls_lookup(benchmark::State& state, bool hit) {
  auto& f = remembered(state);
  const auto& keys = hit ? f.known : f.unknown;
  std::size_t i = 0;
  std::int64_t answered = 0, ran = 0;
  for (auto _ : state) {
    f.calls->run_once(
        tool_calls::key_for(plugin_id, channel_id, keys[i++ % keys.size()]),
        [&](auto finish) {
          ++ran;
          finish(sent, false);
        },
        [&](tool_outcome o) {
          answered += o.ok;
          benchmark::DoNotOptimize(o);
        });
  }
  if (answered != state.iterations() || ran != (hit ? 0 : state.iterations()))
    state.SkipWithError(hit ? "a hit ran the tool" : "a miss did not run the tool once");
  state.SetItemsProcessed(state.iterations());
}
void BM_tool_calls_hit(benchmark::State& state) { tool_calls_lookup(state, true); }
void BM_tool_calls_miss(benchmark::State& state) { tool_calls_lookup(state, false); }

// The LMDB point read alone (key already hashed, record not parsed): how much of the lookup is the store.
void BM_store_get_hit(benchmark::State& state) {
  auto& f = remembered(state);
  std::size_t i = 0;
  for (auto _ : state) {
    auto record = f.db->get(tool_calls::database, f.known_stored[i++ % f.known_stored.size()]);
    if (!record) state.SkipWithError("record missing");
    benchmark::DoNotOptimize(record);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_store_get_miss(benchmark::State& state) {
  auto& f = remembered(state);
  std::size_t i = 0;
  for (auto _ : state) {
    auto record = f.db->get(tool_calls::database, f.unknown_stored[i++ % f.unknown_stored.size()]);
    if (record) state.SkipWithError("unexpected record");
    benchmark::DoNotOptimize(record);
  }
  state.SetItemsProcessed(state.iterations());
}

// The floor: an in-memory map of caller key to record. The record is copied out, as store::get hands back its
// own string.
void BM_unordered_map_hit(benchmark::State& state) {
  auto& f = remembered(state);
  std::size_t i = 0;
  for (auto _ : state) {
    auto it = f.in_memory.find(f.known[i++ % f.known.size()]);
    if (it == f.in_memory.end()) state.SkipWithError("record missing");
    std::string record = it->second;
    benchmark::DoNotOptimize(record);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_unordered_map_miss(benchmark::State& state) {
  auto& f = remembered(state);
  std::size_t i = 0;
  for (auto _ : state) {
    auto it = f.in_memory.find(f.unknown[i++ % f.unknown.size()]);
    if (it != f.in_memory.end()) state.SkipWithError("unexpected record");
    benchmark::DoNotOptimize(it);
  }
  state.SetItemsProcessed(state.iterations());
}

// A short MinTime keeps the binary to a few seconds; the lookups take a few µs at most, so that is still ~10^4+ each.
#define XCONN_LOOKUP_BENCH(fn) BENCHMARK(fn)->Arg(10000)->Arg(100000)->MinTime(0.1)
XCONN_LOOKUP_BENCH(BM_tool_calls_hit);
XCONN_LOOKUP_BENCH(BM_store_get_hit);
XCONN_LOOKUP_BENCH(BM_unordered_map_hit);
XCONN_LOOKUP_BENCH(BM_tool_calls_miss);
XCONN_LOOKUP_BENCH(BM_store_get_miss);
XCONN_LOOKUP_BENCH(BM_unordered_map_miss);

}  // namespace
