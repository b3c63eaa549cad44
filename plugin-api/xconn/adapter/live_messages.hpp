// A reply shown live while it is written (the host's deltas, docs/plugin-api.md "Live replies"): the first text
// creates one message on the target, every newer text edits it, one request at a time per message, and a
// conversation takes at most one edit per edit_gap whichever of its live messages it is for (a target's own edit
// rate: Telegram's is one a second per chat). A request on its way picks up the newest text when it returns, so a
// burst of deltas costs one edit, not one each. The final takes the message over (take) and edits it whole.
//
//   live_messages::create_fn create = [this, b](std::string text) { return create_on_target(b, std::move(text)); };
//   live_messages::edit_fn edit = [this, b](std::string id, std::string text) { return edit_on_target(b, ...); };
//   co_await live_.update(channel + "\n" + message_id, chat, text, std::move(create), std::move(edit));
//
// (The functions are named locals: GCC 12 destroys a lambda written inside a co_await expression twice when a stop
// destroys the frame, docs/plugin-api.md "One compiler trap".) Everything runs on the adapter's loop.
#pragma once

#include <xconn/adapter/network_adapter.hpp>

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace xconn::adapter {

class live_messages {
 public:
  using clock = std::chrono::steady_clock;
  // Creates the message with text: the target's id of it ("" when the target named none), or none when it failed.
  using create_fn = std::function<boost::asio::awaitable<std::optional<std::string>>(std::string text)>;
  // Edits message id to text: whether the target took it.
  using edit_fn = std::function<boost::asio::awaitable<bool>(std::string id, std::string text)>;

  // adapter outlives this.
  live_messages(network_adapter& adapter, clock::duration edit_gap) : adapter_(adapter), edit_gap_(edit_gap) {}

  // Brings the live message `key` (a channel and the host's message id) of `conversation` to text. Returns at once
  // when a request of it is on its way (that one takes text next); a failed request leaves it to the final.
  boost::asio::awaitable<void> update(std::string key, std::string conversation, std::string text, create_fn create,
                                      edit_fn edit) {
    {
      auto& m = messages_[key];
      m.latest = std::move(text);
      if (m.busy) co_return;
      m.busy = true;
    }
    for (;;) {
      auto it = messages_.find(key);
      if (it == messages_.end()) co_return;  // the final took over
      if (it->second.latest == it->second.shown) {
        it->second.busy = false;
        co_return;
      }
      const std::string id = it->second.target_id, want = it->second.latest;
      if (!id.empty()) {
        if (auto wait = take_edit_turn(conversation); wait > clock::duration::zero()) {
          co_await adapter_.pause(wait);
          continue;  // newer text may have come meanwhile, or another message took the turn
        }
      }
      // Two statements each: GCC 12 miscompiles a co_await inside a conditional expression.
      std::optional<std::string> created;
      bool ok = false;
      if (id.empty()) created = co_await create(want);
      else ok = co_await edit(id, want);
      if (id.empty()) ok = created.has_value();
      it = messages_.find(key);
      if (it == messages_.end()) co_return;
      if (!ok) {
        it->second.busy = false;  // the final will send or edit the whole text
        co_return;
      }
      if (id.empty()) {
        it->second.target_id = *created;
        created_now(conversation);
      }
      it->second.shown = want;
    }
  }

  // The final's turn: the target's id of the live message `key` ("" when there is none), taken out of this once no
  // request of it is on its way, or after longest_wait.
  boost::asio::awaitable<std::string> take(std::string key,
                                           clock::duration longest_wait = std::chrono::seconds(10)) {
    for (auto until = clock::now() + longest_wait;;) {
      auto it = messages_.find(key);
      if (it == messages_.end()) co_return std::string();
      if (!it->second.busy || clock::now() >= until) {
        auto id = std::move(it->second.target_id);
        messages_.erase(it);
        co_return id;
      }
      co_await adapter_.pause(std::chrono::milliseconds(50));
    }
  }

  std::size_t size() const { return messages_.size(); }

 private:
  struct message {
    std::string target_id;  // "" until created
    std::string shown;      // the text the target has
    std::string latest;     // the newest text given
    bool busy = false;      // a request is on its way; it picks up `latest` when it returns
  };

  // Zero when this edit may go now (the turn is taken), else how long until the conversation's next turn.
  clock::duration take_edit_turn(const std::string& conversation) {
    auto now = clock::now();
    auto& last = last_edit_[conversation];
    if (last + edit_gap_ > now) return last + edit_gap_ - now;
    last = now;
    return clock::duration::zero();
  }
  // A message just created: its first edit waits a gap after it, as an edit would. Old turns are pruned.
  void created_now(const std::string& conversation) {
    auto now = clock::now();
    if (last_edit_.size() > 1024) std::erase_if(last_edit_, [&](const auto& e) { return e.second + edit_gap_ < now; });
    auto& last = last_edit_[conversation];
    last = std::max(last, now);
  }

  network_adapter& adapter_;
  clock::duration edit_gap_;
  std::map<std::string, message> messages_;              // by key
  std::map<std::string, clock::time_point> last_edit_;   // by conversation: its last edit's (or creation's) turn
};

}  // namespace xconn::adapter
