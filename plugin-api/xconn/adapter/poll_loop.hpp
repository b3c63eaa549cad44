// A long-poll consumer (a Bot API getUpdates, an IMAP poll, a WeChat or Feishu long poll): polls the target from a
// cursor the adapter keeps in the host's key-value store, emits each page's messages together with the cursor riding
// on the last of them (durable exactly when they all are, docs/plugin-api.md "Refused emits"), asks again from the
// first message not stored, backs off on an outage with the trouble on the health board, and ends when stopped.
//
//   struct poller : xconn::adapter::poll_loop<my_cursor> { using poll_loop::poll_loop; std::string token; };
//   spawn(p->run(my_cursor::from_kept(kv_get(key).value_or("")), [this, p](const my_cursor& c) { return ask(*p, c); }));
//   consumer_stop / on_halting: p->stop();
// Awaiting run instead, name the poll function first: GCC 12 destroys a lambda written inside a co_await expression
// twice when a stop destroys the waiting frame (docs/plugin-api.md "One compiler trap").
//
// Cursor is the adapter's own type: copyable, with `std::string kept() const` (what the store keeps).
#pragma once

#include <xconn/adapter/emit_refusal.hpp>
#include <xconn/adapter/health_board.hpp>
#include <xconn/adapter/network_adapter.hpp>
#include <xconn/adapter/retry_backoff.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xconn::adapter {

struct poll_options {
  std::string source;      // the health board's source ("poller <key>")
  std::string cursor_key;  // where the host's store keeps the cursor
  std::string refused_counter = "messages_refused";     // counted when the host refuses a message for good
  std::chrono::seconds longest_outage_wait = retry_backoff::longest;  // the backoff's cap (1 s, doubling)
  std::chrono::steady_clock::duration after_failed_emit = std::chrono::seconds(1);
};

template <class Cursor>
class poll_loop {
 public:
  using duration = std::chrono::steady_clock::duration;

  // One message of a page.
  struct message {
    std::string channel;
    std::string json;
    Cursor retry;        // the cursor to ask again from when this message was not stored
    std::string label;   // names it in a log line ("update 42"), never its text
    bool context = false;  // a quoted message: its loss is logged, not asked for again
  };
  // What one poll brought.
  struct page {
    enum class kind { messages, outage, again, stop } what = kind::messages;
    std::string trouble;              // an outage's code, shown on the health board
    std::vector<message> messages;
    std::optional<Cursor> next;       // the cursor after the page; none: nothing new
    duration pause_after{};           // a wait before the next poll (a page of repeats only)
  };
  static page outage(std::string code) { return {page::kind::outage, std::move(code), {}, {}, {}}; }
  static page again() { return {page::kind::again, {}, {}, {}, {}}; }            // at once (a rate limit's wait)
  static page stop_polling() { return {page::kind::stop, {}, {}, {}, {}}; }      // the target refused for good

  using poll_fn = std::function<boost::asio::awaitable<page>(const Cursor&)>;

  // adapter and health outlive the loop's run.
  poll_loop(network_adapter& adapter, health_board& health, poll_options options)
      : adapter_(adapter), health_(health), options_(std::move(options)) {}
  virtual ~poll_loop() = default;

  void stop() { stopping_ = true; }
  bool stopped() const { return stopping_; }

  // Polls from cursor until stopped (or a stop_polling page); the loop's trouble is cleared when it ends.
  boost::asio::awaitable<void> run(Cursor cursor, poll_fn poll) {
    retry_backoff backoff;
    auto longest = std::chrono::duration_cast<duration>(options_.longest_outage_wait);
    while (!stopping_) {
      auto got = co_await poll(cursor);
      if (stopping_ || got.what == page::kind::stop) break;
      if (got.what == page::kind::again) continue;
      health_.set(options_.source, got.trouble);
      if (got.what == page::kind::outage) {
        co_await adapter_.pause(std::min<duration>(backoff.next(), longest));
        continue;
      }
      backoff = {};
      if (got.next && got.messages.empty()) {
        bool kept = co_await keep(*got.next);
        if (!kept) {
          co_await adapter_.pause(options_.after_failed_emit);  // asked again from where it was
          continue;
        }
      }
      if (got.next && !got.messages.empty()) {
        auto failed = co_await emit_page(std::move(got.messages), *got.next);
        if (failed) {
          co_await keep(*failed);
          cursor = *failed;
          co_await adapter_.pause(options_.after_failed_emit);
          continue;
        }
      }
      if (got.next) cursor = *got.next;
      if (got.pause_after > duration::zero()) co_await adapter_.pause(got.pause_after);
    }
    health_.set(options_.source, "");  // a stopped consumer's trouble is no one's any more
  }

  // Emits the messages (at least one) without waiting between them, next riding with the last; waits for them all.
  // The cursor to ask again from (that of the first message not stored), or none when all are.
  boost::asio::awaitable<std::optional<Cursor>> emit_page(std::vector<message> messages, Cursor next) {
    auto cursor = xconn::sdk::kv_batch().put(options_.cursor_key, next.kept());
    using results = std::vector<xconn::sdk::emit_result>;
    auto all = co_await adapter_.template host_call<results>([&](auto resume) {
      struct gather {
        results got;
        std::atomic<std::size_t> left{0};
        std::function<void(results)> done;
      };
      auto g = std::make_shared<gather>();
      g->got.resize(messages.size());
      g->left = messages.size();
      g->done = std::move(resume);
      for (std::size_t i = 0; i < messages.size(); ++i) {
        auto each = [g, i](xconn::sdk::emit_result r) {
          g->got[i] = std::move(r);
          if (--g->left == 0) g->done(std::move(g->got));
        };
        if (i + 1 == messages.size()) adapter_.host().emit_with(messages[i].channel, messages[i].json, cursor, each);
        else adapter_.host().emit(messages[i].channel, messages[i].json, each);
      }
    });
    const auto& who = adapter_.name();
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].ok) continue;
      const auto& code = all[i].failure.code;
      if (emit_refused_for_good(code)) {
        // Asking again would bring the same refusal every time, forever: skipped (the host recorded an `error`
        // event). The host's reason names the field, never the text.
        if (code == "invalid_message") {
          adapter_.host().count(options_.refused_counter);
          adapter_.host().warn(who + ": " + messages[i].label + " was refused by the host and is skipped (" +
                               all[i].failure.message + ")");
        }
        continue;
      }
      if (messages[i].context) {
        adapter_.host().warn(who + ": a quoted message was not kept as context");
        continue;
      }
      adapter_.host().warn(who + ": " + messages[i].label + " was not stored (" + code + "); asked for again");
      co_return messages[i].retry;
    }
    // The cursor rode with the last emit: refused with it, it is kept on its own.
    if (all.back().ok) co_return std::nullopt;
    xconn::sdk::kv_result kept = co_await adapter_.kv_write(cursor);
    if (!kept.ok) co_return messages.back().retry;
    co_return std::nullopt;
  }

 private:
  boost::asio::awaitable<bool> keep(const Cursor& c) {
    xconn::sdk::kv_result kept = co_await adapter_.kv_write(xconn::sdk::kv_batch().put(options_.cursor_key, c.kept()));
    co_return kept.ok;
  }

  network_adapter& adapter_;
  health_board& health_;
  poll_options options_;
  std::atomic<bool> stopping_{false};
};

}  // namespace xconn::adapter
