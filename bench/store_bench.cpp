// Group commit vs one fsync per write: the reason the store has a single batching writer thread.
#include "core/store/store.hpp"
#include "bench_store.hpp"

#include <benchmark/benchmark.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <unistd.h>

namespace {

using xconn::bench::bench_store;


const std::string value(100, 'v');

// Each write waits for its own commit: one transaction and one fsync per write.
void BM_write_sync_one_by_one(benchmark::State& state) {
  bench_store b({"bench"});
  std::uint64_t i = 0;
  for (auto _ : state)
    if (b.store->write_sync(xconn::write_batch{}.put("bench", std::to_string(i++), value)))
      state.SkipWithError("write failed");
  state.SetItemsProcessed(state.iterations());
  state.counters["commits"] = static_cast<double>(b.store->commit_count());
}

// range(0) writers each have one write in flight (as many I/O threads would): every iteration issues them
// all and waits for every completion; the writer thread commits whatever has piled up in one transaction.
void BM_group_commit(benchmark::State& state) {
  bench_store b({"bench"});
  const auto writers = state.range(0);
  std::mutex m;
  std::condition_variable cv;
  std::int64_t completed = 0, failed = 0;
  std::uint64_t key = 0;
  for (auto _ : state) {
    const std::int64_t target = completed + writers;
    for (std::int64_t w = 0; w < writers; ++w)
      b.store->write(xconn::write_batch{}.put("bench", std::to_string(key++), value), [&](std::error_code ec) {
        std::lock_guard lock(m);
        ++completed;
        failed += ec ? 1 : 0;
        cv.notify_one();
      });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return completed >= target; });
  }
  if (failed) state.SkipWithError("write failed");
  state.SetItemsProcessed(completed);
  state.counters["commits"] = static_cast<double>(b.store->commit_count());
}

// Real concurrent writers: benchmark threads share one store, each blocking on its own write_sync.
std::unique_ptr<bench_store> shared;
void open_shared(const benchmark::State&) { shared = std::make_unique<bench_store>(std::vector<std::string>{"bench"}); }
void close_shared(const benchmark::State&) { shared.reset(); }

void BM_group_commit_threads(benchmark::State& state) {
  std::uint64_t i = static_cast<std::uint64_t>(state.thread_index()) << 32;
  for (auto _ : state)
    if (shared->store->write_sync(xconn::write_batch{}.put("bench", std::to_string(i++), value)))
      state.SkipWithError("write failed");
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_write_sync_one_by_one)->Iterations(300)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_group_commit)->Arg(8)->Arg(64)->Iterations(100)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_group_commit_threads)->Threads(8)->Iterations(100)->Setup(open_shared)->Teardown(close_shared)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
