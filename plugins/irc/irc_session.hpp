// One IRC connection (server, nick, password), shared by every channel bound through it: registration (CAP for
// IRCv3 tags, PASS, NICK, USER), PING/PONG and a keepalive, JOINs kept and redone after a reconnect, NAMES, and
// outgoing PRIVMSG lines paced at lines_per_second. The connection itself (TLS, deadlines, pacing, the reader paused
// while max_emits_in_flight are unanswered, the keepalive) is xconn/adapter/line_connection.hpp. A dropped connection
// reconnects 1 s doubling to 60 s (xconn/adapter/retry_backoff.hpp); PRIVMSG lines wait out a reconnect in a
// line_outbox, JOIN and NAMES their answers in pending_answers.
// Everything runs on the plugin's one event-loop thread: no member is touched from another (an emit slot only posts).
#pragma once

#include "irc_line.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <xconn/adapter/awaited_flag.hpp>
#include <xconn/adapter/line_connection.hpp>
#include <xconn/adapter/line_outbox.hpp>
#include <xconn/adapter/pending_answers.hpp>

#include <chrono>
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

class session : public std::enable_shared_from_this<session> {
 public:
  session(boost::asio::io_context& io, boost::asio::ssl::context& tls, session_options options, session_events events);

  void run();      // starts connecting (and reconnecting, until close)
  void close();    // QUIT, then no reconnect
  void abandon();  // closes the socket at once, with the event loop stopped (the plugin's halt)

  bool registered() const { return registered_; }
  bool linked() const { return link_ != nullptr; }  // a connection is open (or a QUIT is still going out)
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
  // The server's answer to a JOIN or a NAMES, awaited under "JOIN <folded channel>" or "NAMES <folded channel>".
  struct answer {
    std::string outcome;  // a JOIN's refusal
    std::vector<std::string> nicks;
  };
  using flag = xconn::adapter::awaited_flag;

  boost::asio::awaitable<void> lifetime();
  boost::asio::awaitable<std::string> connect_and_register();
  boost::asio::awaitable<void> read_lines(std::shared_ptr<xconn::adapter::line_connection> c);
  void handle(const line& l);
  void handle_registration(const line& l);
  void send_now(std::string text);  // a control line (PONG, JOIN, CAP, ...): ahead of the paced ones
  void settle_registration(const std::string& outcome);
  void drop_connection();

  boost::asio::io_context& io_;
  boost::asio::ssl::context& tls_context_;
  session_options options_;
  session_events events_;
  std::shared_ptr<xconn::adapter::line_connection> link_;  // the current connection, or none
  bool registered_ = false;
  bool closing_ = false;
  std::string registration_outcome_;  // of the current attempt, once settled
  std::shared_ptr<flag> registration_ = std::make_shared<flag>(), lost_ = std::make_shared<flag>();
  std::vector<std::string> offered_caps_;
  xconn::adapter::line_outbox paced_;  // PRIVMSG lines, written once registered
  boost::asio::steady_timer backoff_;
  std::map<std::string, std::string> wanted_;  // channels to be in: folded name → as given
  std::set<std::string> joined_;               // folded names the server confirmed on this connection
  xconn::adapter::pending_answers<std::string, answer> answers_;  // JOINs and NAMES sent
};

}  // namespace irc
