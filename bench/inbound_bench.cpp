// The host's per-message cost of one inbound message as inbound_service handles it (record encode, queue add,
// commit, send, ack, erase), in memory and with its LMDB writes group committed, beside the floors it builds on:
// a std::deque push/pop of the same message and the record encode alone.
#include "core/base/ids.hpp"
#include "core/messaging/inbound_service.hpp"
#include "core/messaging/inbox.hpp"
#include "core/store/plugin_kv.hpp"
#include "core/store/store.hpp"
#include "bench_store.hpp"

#include <benchmark/benchmark.h>

#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

using xconn::bench::bench_store;

using xconn::inbound_message;
using xconn::inbound_service;
using xconn::write_batch;

const std::string channel_id = "cch_Ab3dE5gH7jK9mN1pQ3sT5v";
constexpr long long now_ms = 1790000000000;
constexpr long long expiry_ms = 3600 * 1000;  // config default delivery.expiry_s
// Messages per round of emits before the pump sends them and xAgent acks them: the default window, so every
// message of a round goes out in one take_sendable.
constexpr std::size_t round_size = xconn::inbox_policy{}.window;

// A WeChat direct message as parse_emit leaves it (ids and times are the host's, added per message).
inbound_message incoming_message() {
  inbound_message m;
  m.text = "Hello, see you at 3 pm \u2014 bring the report";
  m.channel_key = "wechat/dm/wxid_8f3k2l9x0q";
  m.sender_id = "wxid_8f3k2l9x0q";
  m.sender_name = "Alice Zhang";
  m.role = "user";
  m.modality = "text";
  m.at = now_ms - 1200;
  return m;
}
const inbound_message incoming = incoming_message();

// The keys inbound_service.cpp gives the records (its helpers are private to it).
std::string message_key(std::string_view channel, std::uint64_t seq) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, seq);
  return std::string(channel) + "/" + hex;
}
std::string id_key(std::string_view channel, std::string_view msg_id) {
  return std::string(channel) + "/" + std::string(msg_id);
}

// One channel's queue as inbound_service keeps it: the inbox behind the service's mutex, and the write batches
// emit and ack build. Where a batch goes (nowhere, or the store) is the caller's.
struct channel_queue {
  std::mutex mutex;
  xconn::channel_inbox inbox{xconn::inbox_policy{}};
  std::size_t emitted = 0, delivered = 0;

  // inbound_service::emit after parse_emit: the dedup check, host ids and times, the records, the queue. commit
  // runs under the lock, as emit queues its write there to keep commits in emit order. Returns the seq.
  template <class Commit>
  std::uint64_t emit(Commit&& commit) {
    inbound_message m = incoming;
    m.msg_id = "wxmsg_" + std::to_string(emitted++);  // the plugin's dedup id: one per message
    std::lock_guard lock(mutex);
    if (inbox.seen(m.msg_id, now_ms)) std::abort();
    m.seq = inbox.next_seq();
    m.message_id = xconn::unique_id("msg_");
    m.accepted_at = now_ms;
    m.expires_at = now_ms + expiry_ms;
    write_batch batch;
    batch.put(std::string(inbound_service::messages_db), message_key(channel_id, m.seq), m.to_record());
    inbox.remember(m.msg_id, m.expires_at);
    batch.put(std::string(inbound_service::ids_db), id_key(channel_id, m.msg_id), std::to_string(m.expires_at));
    auto seq = m.seq;
    if (!inbox.add(std::move(m)).empty()) std::abort();  // a round never reaches the capacity
    commit(std::move(batch), seq);
    return seq;
  }

  // inbound_service::on_committed.
  void committed(std::uint64_t seq) {
    std::lock_guard lock(mutex);
    inbox.mark_durable(seq);
  }

  // inbound_service::pump (without the wire packet), then xAgent's ack of each message sent, each under its own
  // lock with its own erase batch, as inbound_service::ack runs them.
  template <class Commit>
  void send_and_ack(Commit&& commit) {
    std::vector<std::string> sent;
    {
      std::lock_guard lock(mutex);
      auto out = inbox.take_sendable(now_ms);
      for (auto seq : out.send) {
        const auto* m = inbox.find(seq);
        benchmark::DoNotOptimize(inbox.context_of(seq));
        benchmark::DoNotOptimize(inbox.attempts(seq));
        sent.push_back(m->message_id);
      }
    }
    for (const auto& message_id : sent) {
      write_batch batch;
      {
        std::lock_guard lock(mutex);
        for (const auto& m : inbox.ack(message_id, xconn::ack_status::accepted, false, now_ms)) {
          batch.erase(std::string(inbound_service::messages_db), message_key(channel_id, m.seq));
          ++delivered;
        }
      }
      commit(std::move(batch));
    }
  }
};

// Every write of the service goes nowhere: what the host spends per message besides the store.
void BM_inbound_in_memory(benchmark::State& state) {
  channel_queue queue;
  for (auto _ : state) {
    auto seq = queue.emit([](write_batch batch, std::uint64_t) { benchmark::DoNotOptimize(batch); });
    queue.committed(seq);
    if (queue.emitted % round_size == 0)
      queue.send_and_ack([](write_batch batch) { benchmark::DoNotOptimize(batch); });
  }
  if (queue.delivered != queue.emitted / round_size * round_size) state.SkipWithError("messages not delivered");
  state.SetItemsProcessed(state.iterations());
}


// The same, with the writes the service issues: each emit's put and each ack's erase queued without waiting, and
// the store's writer group-committing whatever piled up. A round is sent once its emits are durable, as the
// pump only sends durable messages; the erases of one round commit with the next round's puts. With range(0) = 1
// every emit also moves the plugin's cursor in the same commit (plugin.h xconn_host_emit_with), staged through
// plugin_kv as the server stages it; range(0) = 0 is the plain emit, its baseline.
void BM_inbound_with_store(benchmark::State& state) {
  const bool with_cursor = state.range(0) == 1;
  bench_store b({std::string(inbound_service::messages_db), std::string(inbound_service::ids_db),
                 std::string(xconn::plugin_kv::database)});
  xconn::plugin_kv kv(*b.store, 16ull << 20);
  channel_queue queue;
  std::mutex m;
  std::condition_variable cv;
  std::size_t durable = 0, failed = 0;
  for (auto _ : state) {
    queue.emit([&](write_batch batch, std::uint64_t seq) {
      if (with_cursor && kv.stage("wechat", {{false, "cursor/" + channel_id, std::to_string(seq)}}, batch))
        std::abort();
      b.store->write(std::move(batch), [&, seq](std::error_code ec) {
        if (!ec) queue.committed(seq);  // on the writer thread, like on_committed
        std::lock_guard lock(m);
        ++durable;
        failed += ec ? 1 : 0;
        cv.notify_one();
      });
    });
    if (queue.emitted % round_size == 0) {
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return durable == queue.emitted; });
      }
      queue.send_and_ack([&](write_batch batch) {
        b.store->write(std::move(batch), [&](std::error_code ec) {
          if (ec) {
            std::lock_guard lock(m);
            ++failed;
          }
        });
      });
    }
  }
  b.store->flush();
  if (failed) state.SkipWithError("write failed");
  if (queue.delivered != queue.emitted / round_size * round_size) state.SkipWithError("messages not delivered");
  state.SetItemsProcessed(state.iterations());
  state.counters["commits"] = static_cast<double>(b.store->commit_count());
}

// Floor 1: queueing the same message with nothing else (copied in as emit copies it here, moved out).
void BM_deque_push_pop(benchmark::State& state) {
  std::deque<inbound_message> queue;
  for (auto _ : state) {
    queue.push_back(incoming);
    inbound_message out = std::move(queue.front());
    queue.pop_front();
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}

// Floor 2: only the record LMDB keeps, of a message with its host ids.
void BM_record_encode(benchmark::State& state) {
  inbound_message m = incoming;
  m.msg_id = "wxmsg_1";
  m.message_id = xconn::unique_id("msg_");
  m.accepted_at = now_ms;
  m.expires_at = now_ms + expiry_ms;
  for (auto _ : state) {
    std::string record = m.to_record();
    benchmark::DoNotOptimize(record);
  }
  state.SetItemsProcessed(state.iterations());
}

// Whole rounds only, so every message is acked inside the run. The in-memory run is bounded so the remembered
// msg_ids (one per message, kept for the expiry window) stay a realistic ~10^5; the store run by its fsyncs.
BENCHMARK(BM_deque_push_pop)->MinTime(0.2);
BENCHMARK(BM_record_encode)->MinTime(0.2);
BENCHMARK(BM_inbound_in_memory)->Iterations(round_size * 4000);
// Wall time is what fsync makes it; the CPU column counts the store's writer thread too (process CPU time).
BENCHMARK(BM_inbound_with_store)->Arg(0)->Arg(1)->Iterations(round_size * 200)->Unit(benchmark::kMicrosecond)
    ->UseRealTime()->MeasureProcessCPUTime();

}  // namespace
