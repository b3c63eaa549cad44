// At an adapter's stop its connections say goodbye before the loop stops (an IRC QUIT, a websocket close frame):
// every shared consumer is closed on the loop, and the stopping thread waits until none is still linked, at most
// grace. Called from on_halting (the stopping thread, the loop still running). Consumer: close() and linked(), both
// on the loop.
#pragma once

#include <xconn/adapter/shared_consumers.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>

namespace xconn::adapter {

namespace graceful_close_detail {
template <class Consumer>
boost::asio::awaitable<void> close_and_watch(std::vector<std::shared_ptr<Consumer>> consumers,
                                             std::chrono::steady_clock::time_point until,
                                             std::shared_ptr<std::promise<void>> gone) {
  for (auto& c : consumers) c->close();
  boost::asio::steady_timer tick(co_await boost::asio::this_coro::executor);
  while (std::chrono::steady_clock::now() < until && std::ranges::any_of(consumers, [](auto& c) { return c->linked(); })) {
    tick.expires_after(std::chrono::milliseconds(20));
    co_await tick.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
  gone->set_value();
}
}  // namespace graceful_close_detail

template <class Consumer>
void close_gracefully(boost::asio::io_context& loop, std::vector<std::shared_ptr<Consumer>> consumers,
                      std::chrono::steady_clock::duration grace) {
  auto gone = std::make_shared<std::promise<void>>();
  auto closed = gone->get_future();
  auto until = std::chrono::steady_clock::now() + grace;
  boost::asio::co_spawn(loop, graceful_close_detail::close_and_watch(std::move(consumers), until, gone),
                        boost::asio::detached);
  closed.wait_until(until);
}

template <class Consumer>
void close_gracefully(boost::asio::io_context& loop, const shared_consumers<Consumer>& all,
                      std::chrono::steady_clock::duration grace) {
  std::vector<std::shared_ptr<Consumer>> consumers;
  for (auto& entry : all.snapshot()) consumers.push_back(entry.second);
  close_gracefully(loop, std::move(consumers), grace);
}

}  // namespace xconn::adapter
