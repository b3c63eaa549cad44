// One IRC connection (server, nick, password), shared by every channel bound through it: registration (CAP for
// IRCv3 tags, PASS, NICK, USER), PING/PONG and a keepalive, JOINs kept and redone after a reconnect, NAMES, and
// outgoing PRIVMSG lines paced at lines_per_second. A dropped connection reconnects 1 s doubling to 60 s
// (xconn/adapter/retry_backoff.hpp). Incoming lines are read no faster than the host stores their emits: the reader
// stops while max_emits_in_flight are unanswered, so a flood waits in TCP (and at the server), not in memory.
// Everything runs on the plugin's one event-loop thread: no member is touched from another (an emit slot only posts).
#pragma once

#include "irc_line.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace irc {

using clock = std::chrono::steady_clock;

struct session_options {
  std::string host;
  std::string port;
  bool tls = false;
  std::string nick;
  std::string password;  // "" for none; a secret: never logged or quoted
  std::chrono::seconds connect_timeout{15};
  int lines_per_second = 2;
  std::size_t max_emits_in_flight = 64;  // lines handed to the host and not yet answered, per connection
};

// What the session tells its owner, always on the event-loop thread.
struct session_events {
  std::function<void(const line&)> on_line;                 // every line after registration
  std::function<void(bool registered)> on_state;            // registered, or the connection was lost
  std::function<void(const std::string& code)> on_refused;  // registration refused for good (invalid_credentials)
  std::function<void(const std::string& what)> on_count;    // a counter for /metrics
};

// A flag coroutines of one thread wait on until it is set or their deadline passes; any number may wait.
struct one_shot {
  bool done = false;
  std::vector<boost::asio::steady_timer*> waiters;
  void set() {
    done = true;
    for (auto* t : waiters) t->cancel();
  }
  // Whether it was set before the deadline.
  boost::asio::awaitable<bool> wait(clock::time_point deadline);
};

class session : public std::enable_shared_from_this<session> {
 public:
  session(boost::asio::io_context& io, boost::asio::ssl::context& tls, session_options options, session_events events);

  void run();      // starts connecting (and reconnecting, until close)
  void close();    // QUIT, then no reconnect
  void abandon();  // closes the socket at once, with the event loop stopped (the plugin's halt)

  bool registered() const { return registered_; }
  // One emit in flight for this connection: the reader stops at max_emits_in_flight until slots are let go. Keep
  // it until the host answered the emit; it may be destroyed on any thread (it posts back to the event loop).
  std::shared_ptr<void> hold_emit_slot();

  // The outcome of the first registration, or of the current one once the session was up: "" registered, else
  // "invalid_credentials", "nick_in_use", "invalid_input" or "target_unreachable" (nothing within the deadline).
  boost::asio::awaitable<std::string> ready(clock::time_point deadline);
  // JOINs channel (kept: redone after every reconnect) and waits for the server's JOIN or refusal: "" joined, else
  // "join_refused" or "target_unreachable".
  boost::asio::awaitable<std::string> join(const std::string& channel, clock::time_point deadline);
  void part(const std::string& channel);
  // The nicks of a channel (mode prefixes stripped); nullopt when the server did not answer in time.
  boost::asio::awaitable<std::optional<std::vector<std::string>>> names(const std::string& channel,
                                                                       clock::time_point deadline);
  // PRIVMSG target :body for each body, paced; they wait through a reconnect (and go on after the deadline).
  // Whether all were written by the deadline.
  boost::asio::awaitable<bool> say(const std::string& target, const std::vector<std::string>& bodies,
                                   clock::time_point deadline);

 private:
  using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
  // One TCP (or TLS) connection. Its reader and writer (which keeps it alive) each hold it, so it lives until both
  // ended.
  struct link {
    std::unique_ptr<boost::beast::tcp_stream> plain;
    std::unique_ptr<tls_stream> tls;
    bool open = true;
    clock::time_point last_read = clock::now();
    void shut();
  };
  struct batch {
    std::size_t remaining = 0;
    std::shared_ptr<one_shot> done = std::make_shared<one_shot>();
  };
  struct queued {
    std::string text;              // the whole line, CR LF included
    std::shared_ptr<batch> owner;  // for a say() whose writing is awaited
  };
  // A JOIN or a NAMES waiting for the server's answer.
  struct request {
    bool names = false;
    std::string channel;  // folded
    std::shared_ptr<one_shot> answered = std::make_shared<one_shot>();
    std::string outcome;  // a JOIN's refusal
    std::vector<std::string> nicks;
  };

  boost::asio::awaitable<void> lifetime();
  boost::asio::awaitable<std::string> connect_and_register();
  boost::asio::awaitable<void> read_lines(std::shared_ptr<link> l);
  boost::asio::awaitable<void> write_lines(std::shared_ptr<link> l);
  // Waits for the server's answer to a JOIN or (names) a NAMES of channel, already sent: the request as answered.
  boost::asio::awaitable<request> await_answer(bool names, std::string channel, clock::time_point deadline);
  void handle(const line& l);
  void handle_registration(const line& l);
  void send_now(std::string text);  // a control line (PONG, JOIN, CAP, ...): ahead of the paced ones
  void wake_writer() { writer_wake_.cancel(); }
  void emit_answered();
  void settle_registration(const std::string& outcome);
  void drop_connection();

  boost::asio::io_context& io_;
  boost::asio::ssl::context& tls_context_;
  session_options options_;
  session_events events_;
  std::shared_ptr<link> link_;  // the current connection, or none
  bool registered_ = false;
  bool closing_ = false;
  std::string registration_outcome_;  // of the current attempt, once settled
  std::shared_ptr<one_shot> registration_ = std::make_shared<one_shot>();
  std::shared_ptr<one_shot> lost_ = std::make_shared<one_shot>();
  std::vector<std::string> offered_caps_;
  std::deque<std::string> control_;  // unpaced
  std::deque<queued> paced_;         // PRIVMSG lines
  clock::time_point next_paced_{};
  boost::asio::steady_timer writer_wake_;
  boost::asio::steady_timer backoff_;
  boost::asio::steady_timer reader_wake_;  // cancelled when an emit slot frees or the link drops
  std::size_t emits_in_flight_ = 0;
  std::map<std::string, std::string> wanted_;  // channels to be in: folded name → as given
  std::set<std::string> joined_;               // folded names the server confirmed on this connection
  std::vector<request*> waiting_;              // requests awaiting the server's answer
};

}  // namespace irc
