#include "irc_session.hpp"

#include "irc_replies.hpp"

#include <xconn/adapter/retry_backoff.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <iterator>

namespace irc {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using namespace std::chrono_literals;

namespace {
constexpr auto keepalive_interval = 90s;            // a PING when the server said nothing for this long
constexpr auto dead_after = 240s;                   // nothing read for this long: the connection is gone
constexpr auto write_timeout = 60s;                 // a line the server takes nothing of for this long: gone too
constexpr std::size_t max_line_bytes = 8191 + 512;  // IRCv3 tags plus an RFC 1459 line
}  // namespace

session::session(asio::io_context& io, asio::ssl::context& tls, session_options options, session_events events)
    : io_(io), tls_context_(tls), options_(std::move(options)), events_(std::move(events)), paced_(io),
      backoff_(io) {}

void session::run() { asio::co_spawn(io_, lifetime(), asio::detached); }

void session::close() {
  if (closing_) return;
  closing_ = true;
  backoff_.cancel();
  if (!link_ || !registered_) return drop_connection();
  send_now(build_line("QUIT", {"xconn"}));
  link_->close_after_writes();  // the reader then sees the end and drops it
}

void session::abandon() {
  closing_ = true;
  if (link_) link_->close();
}

// Connects, registers, serves until the connection is lost, and again after a backoff, until closed or refused.
awaitable<void> session::lifetime() {
  auto self = shared_from_this();
  xconn::adapter::retry_backoff backoff;
  while (!closing_) {
    auto outcome = co_await connect_and_register();
    if (outcome.empty()) {
      backoff = {};
      for (const auto& [folded, channel] : wanted_) send_now(build_line("JOIN", {channel}));
      events_.on_state(true);
      auto lost = lost_;
      co_await lost->wait(clock::time_point::max());
      registered_ = false;
      joined_.clear();
      events_.on_state(false);
    } else if (outcome == "invalid_credentials" || outcome == "invalid_input") {
      drop_connection();
      if (events_.on_refused) events_.on_refused(outcome);
      break;
    }
    drop_connection();
    if (closing_) break;
    events_.on_count("reconnect_waits");
    backoff_.expires_after(backoff.next());
    co_await backoff_.async_wait(asio::as_tuple(use_awaitable));
  }
  // Nobody waits past the end: joins and NAMES answer now, unwritten lines are given up.
  answers_.settle_all();
  paced_.give_up();
}

awaitable<std::string> session::connect_and_register() {
  registration_ = std::make_shared<flag>();
  registration_outcome_.clear();
  lost_ = std::make_shared<flag>();
  offered_caps_.clear();
  auto deadline = clock::now() + options_.connect_timeout;
  auto c = std::make_shared<xconn::adapter::line_connection>(
      io_, xconn::adapter::line_options{
               .host = options_.host,
               .port = options_.port,
               .tls = options_.tls ? &tls_context_ : nullptr,
               .connect_timeout = options_.connect_timeout,
               .max_line_bytes = max_line_bytes,
               .max_unanswered = options_.max_emits_in_flight,
               .write_timeout = write_timeout,
               .min_gap = std::chrono::duration_cast<clock::duration>(1s) / options_.lines_per_second,
               .line_end = "",  // build_line ends each line
               .ping = build_line("PING", {"xconn"}),
               .ping_after = keepalive_interval,
               .dead_after = dead_after,
               .count = [events = events_](const char* what) { events.on_count(what); },
           });
  try {
    co_await c->connect();
  } catch (const boost::system::system_error&) {
    events_.on_count("connect_failures");
    settle_registration("target_unreachable");  // a restore waiting in ready() hears it now, not at its deadline
    co_return "target_unreachable";
  }
  link_ = c;
  asio::co_spawn(io_, read_lines(c), asio::detached);
  // CAP LS first: a server with IRCv3 holds registration until CAP END; one without answers 421, harmlessly.
  send_now(build_line("CAP", {"LS", "302"}));
  if (!options_.password.empty()) send_now(build_line("PASS", {options_.password}));
  send_now(build_line("NICK", {options_.nick}));
  send_now(build_line("USER", {options_.nick, "0", "*", "xconn"}));
  auto registration = registration_;
  if (!co_await registration->wait(deadline)) co_return "target_unreachable";
  co_return registration_outcome_;
}

void session::settle_registration(const std::string& outcome) {
  if (registration_->is_set()) return;
  registration_outcome_ = outcome;
  registered_ = outcome.empty();
  registration_->set();
  if (registered_ && link_) paced_.feed(link_);
}

void session::drop_connection() {
  if (link_) link_->close();
  link_.reset();
  registered_ = false;
  paced_.stop();
  lost_->set();
  settle_registration("target_unreachable");  // no-op once settled
}

awaitable<void> session::read_lines(std::shared_ptr<xconn::adapter::line_connection> c) {
  auto self = shared_from_this();
  while (auto text = co_await c->read_line()) {
    if (auto parsed = parse_line(*text)) handle(*parsed);
    if (!c->open()) break;
  }
  if (link_ == c) drop_connection();
}

std::shared_ptr<void> session::hold_emit_slot() { return link_ ? link_->hold() : std::shared_ptr<void>(); }

void session::send_now(std::string text) {
  if (link_) link_->send(std::move(text));
}

void session::handle(const line& l) {
  if (l.command == "PING") return send_now(build_line("PONG", {l.param(0)}));
  if (!registered_) return handle_registration(l);
  if (l.command == "ERROR") return drop_connection();
  // The server's answers to a JOIN or a NAMES: each settles the requests for its channel.
  if (l.command == "JOIN" && fold(l.nick()) == fold(options_.nick)) {
    joined_.insert(fold(l.param(0)));
    return answers_.settle("JOIN " + fold(l.param(0)));
  }
  if (refuses_join(l)) return answers_.settle("JOIN " + fold(l.param(1)), [](answer& a) { a.outcome = "join_refused"; });
  if (auto reply = names_reply(l))
    return answers_.update("NAMES " + fold(reply->first), [&](answer& a) { std::ranges::copy(reply->second, std::back_inserter(a.nicks)); });
  if (l.command == "366") return answers_.settle("NAMES " + fold(l.param(1)));
  events_.on_line(l);
}

void session::handle_registration(const line& l) {
  if (auto verdict = registration_verdict(l)) return settle_registration(*verdict);
  if (l.command == "CAP")
    if (auto reply = cap_answer(l, offered_caps_)) send_now(std::move(*reply));
}

awaitable<std::string> session::ready(clock::time_point deadline) {
  auto self = shared_from_this();
  if (registered_) co_return std::string();
  auto registration = registration_;
  bool settled = co_await registration->wait(deadline);
  if (registered_) co_return std::string();
  if (!settled || registration_outcome_.empty()) co_return std::string("target_unreachable");
  co_return registration_outcome_;
}

awaitable<std::string> session::join(const std::string& channel, clock::time_point deadline) {
  auto self = shared_from_this();
  auto folded = fold(channel);
  wanted_[folded] = channel;
  if (joined_.contains(folded)) co_return std::string();
  if (!registered_) co_return std::string("target_unreachable");
  send_now(build_line("JOIN", {channel}));
  auto answered = co_await answers_.await("JOIN " + folded, deadline);
  auto outcome = answered ? answered->outcome : "target_unreachable";
  if (outcome.empty() && !joined_.contains(folded)) outcome = "target_unreachable";  // the session ended
  if (!outcome.empty() && outcome != "target_unreachable") wanted_.erase(folded);
  co_return outcome;
}

void session::part(const std::string& channel) {
  auto folded = fold(channel);
  wanted_.erase(folded);
  if (joined_.erase(folded) && registered_) send_now(build_line("PART", {channel}));
}

awaitable<std::optional<std::vector<std::string>>> session::names(const std::string& channel,
                                                                 clock::time_point deadline) {
  auto self = shared_from_this();
  if (!registered_) co_return std::nullopt;
  send_now(build_line("NAMES", {channel}));
  auto answered = co_await answers_.await("NAMES " + fold(channel), deadline);
  if (!answered || !registered_) co_return std::nullopt;
  co_return std::move(answered->nicks);
}

awaitable<bool> session::say(const std::string& target, const std::vector<std::string>& bodies,
                             clock::time_point deadline) {
  auto self = shared_from_this();
  std::vector<std::string> lines;
  for (const auto& body : bodies) lines.push_back(build_line("PRIVMSG", {target, body}));
  co_return co_await paced_.write(std::move(lines), deadline);
}

}  // namespace irc
