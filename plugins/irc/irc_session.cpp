#include "irc_session.hpp"

#include "irc_replies.hpp"

#include <xconn/adapter/retry_backoff.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

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

// Waits on timer until it fires or is cancelled.
awaitable<void> sleep_on(asio::steady_timer& timer) {
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
}
}  // namespace

awaitable<bool> one_shot::wait(clock::time_point deadline) {
  asio::steady_timer timer(co_await asio::this_coro::executor, deadline);
  waiters.push_back(&timer);
  while (!done && clock::now() < deadline) co_await sleep_on(timer);
  std::erase(waiters, &timer);
  co_return done;
}

session::session(asio::io_context& io, asio::ssl::context& tls, session_options options, session_events events)
    : io_(io), tls_context_(tls), options_(std::move(options)), events_(std::move(events)), paced_wake_(io),
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
    co_await sleep_on(backoff_);
  }
  // Nobody waits past the end: joins and NAMES answer now, unwritten lines are given up.
  for (auto* r : waiting_) r->answered->set();
  for (auto& q : paced_)
    if (q.owner) q.owner->done->set();
  paced_.clear();
}

awaitable<std::string> session::connect_and_register() {
  registration_ = std::make_shared<one_shot>();
  registration_outcome_.clear();
  lost_ = std::make_shared<one_shot>();
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
  asio::co_spawn(io_, feed_paced(c), asio::detached);
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
  if (registration_->done) return;
  registration_outcome_ = outcome;
  registered_ = outcome.empty();
  registration_->set();
  paced_wake_.cancel();
}

void session::drop_connection() {
  if (link_) link_->close();
  link_.reset();
  registered_ = false;
  paced_wake_.cancel();
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

awaitable<void> session::feed_paced(std::shared_ptr<xconn::adapter::line_connection> c) {
  auto self = shared_from_this();
  while (c->open() && link_ == c) {
    if (!registered_ || paced_.empty()) {
      paced_wake_.expires_at(clock::time_point::max());
      co_await sleep_on(paced_wake_);
      continue;
    }
    auto next = paced_.front();  // taken off only once written: a lost connection sends it again
    if (!co_await c->write(next.text)) break;
    paced_.pop_front();
    if (next.owner && --next.owner->remaining == 0) next.owner->done->set();
  }
}

void session::send_now(std::string text) {
  if (link_) link_->send(std::move(text));
}

void session::handle(const line& l) {
  if (l.command == "PING") return send_now(build_line("PONG", {l.param(0)}));
  if (!registered_) return handle_registration(l);
  if (l.command == "ERROR") return drop_connection();
  // The server's answers to a JOIN or a NAMES: each settles the requests for its channel.
  auto answer = [&](const std::string& channel, bool names, auto settle) {
    auto folded = fold(channel);
    for (auto* r : waiting_)
      if (r->names == names && r->channel == folded) settle(*r);
  };
  if (l.command == "JOIN" && fold(l.nick()) == fold(options_.nick)) {
    joined_.insert(fold(l.param(0)));
    return answer(l.param(0), false, [](request& r) { r.answered->set(); });
  }
  if (refuses_join(l)) return answer(l.param(1), false, [](request& r) {
    r.outcome = "join_refused";
    r.answered->set();
  });
  if (auto reply = names_reply(l))
    return answer(reply->first, true, [&](request& r) { r.nicks.insert(r.nicks.end(), reply->second.begin(), reply->second.end()); });
  if (l.command == "366") return answer(l.param(1), true, [](request& r) { r.answered->set(); });
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

awaitable<session::request> session::await_answer(bool names, std::string channel, clock::time_point deadline) {
  auto self = shared_from_this();
  request r;
  r.names = names;
  r.channel = fold(channel);
  waiting_.push_back(&r);
  bool settled = co_await r.answered->wait(deadline);
  std::erase(waiting_, &r);
  if (!settled) r.outcome = "target_unreachable";
  co_return r;
}

awaitable<std::string> session::join(const std::string& channel, clock::time_point deadline) {
  auto self = shared_from_this();
  auto folded = fold(channel);
  wanted_[folded] = channel;
  if (joined_.contains(folded)) co_return std::string();
  if (!registered_) co_return std::string("target_unreachable");
  send_now(build_line("JOIN", {channel}));
  auto outcome = (co_await await_answer(false, channel, deadline)).outcome;
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
  auto answered = co_await await_answer(true, channel, deadline);
  if (!answered.outcome.empty() || !registered_) co_return std::nullopt;
  co_return std::move(answered.nicks);
}

awaitable<bool> session::say(const std::string& target, const std::vector<std::string>& bodies,
                             clock::time_point deadline) {
  auto self = shared_from_this();
  auto b = std::make_shared<batch>();
  b->remaining = bodies.size();
  for (const auto& body : bodies) paced_.push_back({build_line("PRIVMSG", {target, body}), b});
  if (bodies.empty()) b->done->set();
  paced_wake_.cancel();
  co_return co_await b->done->wait(deadline) && b->remaining == 0;
}

}  // namespace irc
