// One connection to a chat server as one user (the line protocol is in example_plugin.cpp's header comment), shared
// by every channel signed in as that user there. It signs in, asks for the room's messages after the channels'
// cursor, hands each one to the adapter, and carries SENDs. When the server goes away it tries again 1 s, 2 s, 4 s ...
// at most 60 s apart until the server answers; a refused password ends it. The connection itself (the connect
// deadline, capped lines, the ordered writer) is the layer's line_connection. Everything runs on the adapter's loop.
#pragma once

#include <xconn/adapter/awaited_flag.hpp>
#include <xconn/adapter/channel_checks.hpp>
#include <xconn/adapter/line_connection.hpp>
#include <xconn/adapter/pending_answers.hpp>
#include <xconn/adapter/retry_backoff.hpp>

#include <boost/asio.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace example {

namespace asio = boost::asio;
using asio::awaitable;
using xconn::adapter::check_verdict;

class chat_connection : public std::enable_shared_from_this<chat_connection> {
 public:
  enum class state { connecting, up, away, refused, stopped };
  struct events {
    std::function<long(long newest)> since;  // the seq to ask from after a sign-in (newest: the room's last)
    std::function<awaitable<void>(long seq, std::string from, std::string text)> message;
    std::function<void(state)> changed;
  };

  chat_connection(asio::io_context& io, std::string host, std::string port, std::string user, std::string password,
                  std::chrono::seconds sign_in_timeout, events on)
      : io_(io), pause_(io), deadline_(io), sign_in_timeout_(sign_in_timeout), host_(std::move(host)),
        port_(std::move(port)), user_(std::move(user)), password_(std::move(password)), on_(std::move(on)) {}

  // Until refused or stopped: one session after another, with the backoff between them.
  awaitable<void> run() {
    xconn::adapter::retry_backoff backoff;
    while (state_ != state::stopped) {
      try {
        co_await session(backoff);
      } catch (const std::exception&) {  // refused, reset, closed: the server is away
      }
      sends_.settle_all();  // unanswered SENDs: not delivered
      if (state_ == state::refused || state_ == state::stopped) break;
      ++attempts_;
      set(state::away);
      pause_.expires_after(backoff.next());
      co_await pause_.async_wait(asio::as_tuple(asio::use_awaitable));
      if (state_ == state::away) set(state::connecting);
    }
  }

  // What the server says of the user's password now: at once when signed in or refused, else at the end of the
  // current (or next) try.
  awaitable<check_verdict> outcome() {
    for (auto tries = attempts_; state_ != state::up && state_ != state::refused && attempts_ == tries;) {
      if (state_ == state::stopped) co_return check_verdict::unreachable;
      co_await changed_.wait();
    }
    co_return state_ == state::up ? check_verdict::accepted
                                  : state_ == state::refused ? check_verdict::refused : check_verdict::unreachable;
  }

  // The seq the server gave the message, or nullopt when it was not delivered.
  awaitable<std::optional<long>> send(std::string text) {
    if (state_ != state::up) co_return std::nullopt;
    write("SEND " + text);
    auto seq = co_await sends_.await(0);  // the server answers SENDs in order; 0: refused
    co_return seq.value_or(0) > 0 ? seq : std::nullopt;
  }

  void stop() {
    set(state::stopped);
    if (line_) line_->close();
    pause_.cancel();
    deadline_.cancel();
  }

  state now() const { return state_; }
  const std::string& room() const { return room_; }
  long newest() const { return newest_; }

 private:
  awaitable<void> session(xconn::adapter::retry_backoff& backoff) {
    line_ = std::make_shared<xconn::adapter::line_connection>(
        io_, xconn::adapter::line_options{.host = host_, .port = port_, .connect_timeout = sign_in_timeout_});
    deadline_.expires_after(sign_in_timeout_);  // a server that takes the connection but never answers is away too
    deadline_.async_wait([self = weak_from_this(), line = line_](boost::system::error_code ec) {
      if (auto c = self.lock(); c && !ec && c->state_ != state::up) line->close();
    });
    co_await line_->connect();
    write("HELLO " + user_ + " " + password_);
    auto [verb, rest] = split(co_await read_line());
    if (verb != "OK") co_return set(rest == "denied" ? state::refused : state::away);
    auto [room, newest] = split(rest);  // OK <room> <newest seq>
    room_ = room;
    newest_ = std::stol(newest);
    write("SINCE " + std::to_string(on_.since(newest_)));
    set(state::up);
    backoff = {};
    for (;;) {
      std::tie(verb, rest) = split(co_await read_line());
      if (verb == "MSG") {  // MSG <seq> <from> <text>
        auto [seq, from_text] = split(rest);
        auto [from, text] = split(from_text);
        newest_ = std::max(newest_, std::stol(seq));
        co_await on_.message(std::stol(seq), from, text);
      } else if (verb == "SENT" || verb == "ERR") {
        sends_.settle_oldest([&](long& seq) { seq = verb == "SENT" ? std::stol(rest) : 0; });
      }
    }
  }

  void write(std::string line) { line_->send(std::move(line)); }  // in the order written
  awaitable<std::string> read_line() {
    auto line = co_await line_->read_line();
    if (!line) throw std::runtime_error("the chat server closed the connection");
    co_return std::move(*line);
  }
  static std::pair<std::string, std::string> split(const std::string& s) {
    auto space = s.find(' ');
    return {s.substr(0, space), space == std::string::npos ? "" : s.substr(space + 1)};
  }

  void set(state s) {
    if (state_ == state::stopped || state_ == s) return;
    state_ = s;
    changed_.pulse();  // wakes outcome()
    if (on_.changed) on_.changed(s);
  }

  asio::io_context& io_;
  std::shared_ptr<xconn::adapter::line_connection> line_;
  asio::steady_timer pause_, deadline_;
  xconn::adapter::awaited_flag changed_;  // pulsed on every change of state
  std::chrono::seconds sign_in_timeout_;
  std::string host_, port_, user_, password_;
  events on_;
  state state_ = state::connecting;
  int attempts_ = 0;  // tries that ended without an answer
  std::string room_;
  long newest_ = 0;
  xconn::adapter::pending_answers<int, long> sends_;  // SENDs awaiting SENT <seq> or ERR, in order
};

}  // namespace example
