// Lines for a target that must outlive a connection (an IRC PRIVMSG): queued in order, written through whichever
// connection is fed now (paced by line_connection), each leaving the queue only once written, so a lost connection
// writes it again on the next one. A writer awaits its batch until all its lines were written or its deadline passed
// (they still go out after it). give_up() empties the queue when the target is closed for good.
#pragma once

#include <xconn/adapter/awaited_flag.hpp>
#include <xconn/adapter/line_connection.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace xconn::adapter {

class line_outbox {
 public:
  using clock = std::chrono::steady_clock;

  explicit line_outbox(boost::asio::io_context& io) : state_(std::make_shared<state>(io)) {}

  // Queues lines; whether all were written by the deadline.
  boost::asio::awaitable<bool> write(std::vector<std::string> lines, clock::time_point deadline) {
    auto owner = std::make_shared<batch>();
    owner->remaining = lines.size();
    for (auto& text : lines) state_->queue.push_back({std::move(text), owner});
    if (lines.empty()) owner->written.set();
    state_->wake.cancel();
    co_return co_await owner->written.wait(deadline) && owner->remaining == 0;
  }

  // Writes the queue through c from now on, until c closes or another connection is fed (or stop()).
  void feed(std::shared_ptr<line_connection> c) {
    state_->current = c;
    state_->wake.cancel();
    boost::asio::co_spawn(state_->wake.get_executor(), feed_loop(state_, std::move(c)), boost::asio::detached);
  }
  void stop() {
    state_->current.reset();
    state_->wake.cancel();
  }
  // Every waiting writer answers now (false); the unwritten lines are dropped.
  void give_up() {
    stop();
    for (auto& q : state_->queue) q.owner->written.set();
    state_->queue.clear();
  }

 private:
  struct batch {
    std::size_t remaining = 0;
    awaited_flag written;
  };
  struct queued {
    std::string text;
    std::shared_ptr<batch> owner;
  };
  struct state {
    explicit state(boost::asio::io_context& io) : wake(io) {}
    std::deque<queued> queue;
    std::shared_ptr<line_connection> current;
    boost::asio::steady_timer wake;  // cancelled when a line is queued or the connection fed changes
  };

  static boost::asio::awaitable<void> feed_loop(std::shared_ptr<state> s, std::shared_ptr<line_connection> c) {
    while (c->open() && s->current == c) {
      if (s->queue.empty()) {
        s->wake.expires_at(clock::time_point::max());
        co_await s->wake.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        continue;
      }
      auto next = s->queue.front();  // taken off only once written
      if (!co_await c->write(next.text)) break;
      if (!s->queue.empty()) s->queue.pop_front();  // (give_up may have emptied it meanwhile)
      if (--next.owner->remaining == 0) next.owner->written.set();
    }
  }

  std::shared_ptr<state> state_;
};

}  // namespace xconn::adapter
