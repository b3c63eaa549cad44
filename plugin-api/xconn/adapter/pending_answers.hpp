// Requests sent to a target whose answers come back on the connection's reader: each awaits its answer under a key
// (a JOIN and a NAMES of a channel) or in the order sent (a chat server's SENT/ERR), until the reader settles it or its
// deadline passes. When the connection ends, settle_all() answers every one as it stands, so nobody waits past it.
// Everything on one event loop: the requests live in their awaiting coroutines' frames.
#pragma once

#include <xconn/adapter/awaited_flag.hpp>

#include <algorithm>
#include <optional>
#include <vector>

namespace xconn::adapter {

template <class Key, class Answer>
class pending_answers {
 public:
  using clock = std::chrono::steady_clock;

  // The answer as settled (or as it stood at settle_all), or nullopt when the deadline came first.
  boost::asio::awaitable<std::optional<Answer>> await(Key key, clock::time_point deadline = clock::time_point::max()) {
    request r{std::move(key)};
    listed guard{waiting_, &r};  // off the list even when the frame is destroyed while suspended
    if (!co_await r.settled.wait(deadline)) co_return std::nullopt;
    co_return std::move(r.answer);
  }

  // Changes the answer of every request under key, not settling it (a part of a longer answer).
  template <class Change>
  void update(const Key& key, Change change) {
    for (auto* r : waiting_)
      if (r->key == key) change(r->answer);
  }
  // Settles every request under key, after change.
  template <class Change>
  void settle(const Key& key, Change change) {
    for (auto* r : snapshot())
      if (r->key == key) settle(*r, change);
  }
  void settle(const Key& key) { settle(key, [](Answer&) {}); }
  // Settles the oldest unsettled request, after change; false when none waits.
  template <class Change>
  bool settle_oldest(Change change) {
    for (auto* r : waiting_)
      if (!r->settled.is_set()) return settle(*r, change), true;
    return false;
  }
  void settle_all() {
    for (auto* r : snapshot()) r->settled.set();
  }
  std::size_t size() const { return waiting_.size(); }

 private:
  struct request {
    Key key;
    Answer answer{};
    awaited_flag settled{};
  };
  struct listed {
    std::vector<request*>& list;
    request* r;
    listed(std::vector<request*>& l, request* x) : list(l), r(x) { list.push_back(r); }
    ~listed() { std::erase(list, r); }
  };
  template <class Change>
  void settle(request& r, Change& change) {
    if (r.settled.is_set()) return;
    change(r.answer);
    r.settled.set();
  }
  std::vector<request*> snapshot() const { return waiting_; }

  std::vector<request*> waiting_;  // in the order sent
};

}  // namespace xconn::adapter
