#include "irc_session.hpp"

#include "irc_replies.hpp"

#include <xconn/adapter/retry_backoff.hpp>
#include <xconn/adapter/tls_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace irc {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;
using asio::use_awaitable;
using namespace std::chrono_literals;

namespace {
constexpr auto keepalive_interval = 90s;            // a PING when the server said nothing for this long
constexpr auto dead_after = 240s;                   // nothing read for this long: the connection is gone
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

void session::link::shut() {
  if (!open) return;
  open = false;
  boost::system::error_code ec;
  auto& socket = tls ? beast::get_lowest_layer(*tls).socket() : plain->socket();
  socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

session::session(asio::io_context& io, asio::ssl::context& tls, session_options options, session_events events)
    : io_(io), tls_context_(tls), options_(std::move(options)), events_(std::move(events)), writer_wake_(io),
      backoff_(io), reader_wake_(io) {}

void session::run() { asio::co_spawn(io_, lifetime(), asio::detached); }

void session::close() {
  if (closing_) return;
  closing_ = true;
  backoff_.cancel();
  if (link_ && registered_) return send_now(build_line("QUIT", {"xconn"}));  // the writer closes the link once it went
  drop_connection();
}

void session::abandon() {
  closing_ = true;
  if (link_) link_->shut();
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
  control_.clear();
  auto deadline = clock::now() + options_.connect_timeout;
  auto l = std::make_shared<link>();
  l->plain = std::make_unique<beast::tcp_stream>(io_);
  try {
    l->plain->expires_at(deadline);
    asio::ip::tcp::resolver resolver(io_);
    co_await l->plain->async_connect(co_await resolver.async_resolve(options_.host, options_.port, use_awaitable),
                                     use_awaitable);
    if (options_.tls) {
      l->tls = co_await xconn::adapter::start_tls(*l->plain, tls_context_, options_.host);
      l->plain.reset();
    }
  } catch (const boost::system::system_error&) {
    events_.on_count("connect_failures");
    settle_registration("target_unreachable");  // a restore waiting in ready() hears it now, not at its deadline
    co_return "target_unreachable";
  }
  (l->tls ? beast::get_lowest_layer(*l->tls) : *l->plain).expires_never();
  link_ = l;
  asio::co_spawn(io_, read_lines(l), asio::detached);
  asio::co_spawn(io_, write_lines(l), asio::detached);
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
}

void session::drop_connection() {
  if (link_) link_->shut();
  reader_wake_.cancel();
  link_.reset();
  registered_ = false;
  control_.clear();
  wake_writer();
  lost_->set();
  settle_registration("target_unreachable");  // no-op once settled
}

awaitable<void> session::read_lines(std::shared_ptr<link> l) {
  auto self = shared_from_this();
  std::string buffer;
  char chunk[4096];
  try {
    while (l->open) {
      std::size_t n = 0;
      if (l->tls)
        n = co_await l->tls->async_read_some(asio::buffer(chunk), use_awaitable);
      else
        n = co_await l->plain->async_read_some(asio::buffer(chunk), use_awaitable);
      buffer.append(chunk, n);
      l->last_read = clock::now();
      std::size_t start = 0;
      for (auto end = buffer.find('\n'); end != std::string::npos; end = buffer.find('\n', start)) {
        std::string_view text(buffer.data() + start, end - start);
        start = end + 1;
        if (text.ends_with('\r')) text.remove_suffix(1);
        if (emits_in_flight_ >= options_.max_emits_in_flight) events_.on_count("read_pauses");
        while (l->open && emits_in_flight_ >= options_.max_emits_in_flight) {
          // The keepalive must not read a paused reader as a dead server: the server is not the one that is late.
          l->last_read = clock::now();
          reader_wake_.expires_after(keepalive_interval / 3);
          co_await sleep_on(reader_wake_);
        }
        if (!l->open) co_return;
        if (auto parsed = parse_line(text)) handle(*parsed);
        if (!l->open) co_return;
      }
      buffer.erase(0, start);
      if (buffer.size() > max_line_bytes) break;  // a line without an end: not IRC
    }
  } catch (const boost::system::system_error&) {
  }
  if (link_ == l) drop_connection();
}

std::shared_ptr<void> session::hold_emit_slot() {
  ++emits_in_flight_;
  // The host answers on its own threads: the count is only ever changed on the event loop.
  return std::shared_ptr<void>(nullptr, [weak = weak_from_this(), &io = io_](void*) {
    asio::post(io, [weak] {
      if (auto self = weak.lock()) self->emit_answered();
    });
  });
}

void session::emit_answered() {
  if (emits_in_flight_ > 0) --emits_in_flight_;
  if (emits_in_flight_ < options_.max_emits_in_flight) reader_wake_.cancel();
}

awaitable<void> session::write_lines(std::shared_ptr<link> l) {
  auto self = shared_from_this();
  const auto interval = std::chrono::duration_cast<clock::duration>(1s) / options_.lines_per_second;
  auto write = [&](const std::string& text) {
    return l->tls ? asio::async_write(*l->tls, asio::buffer(text), use_awaitable)
                  : asio::async_write(*l->plain, asio::buffer(text), use_awaitable);
  };
  auto next_check = clock::now() + keepalive_interval / 3;
  try {
    while (l->open) {
      // The keepalive: a PING when the server said nothing for a while, the connection dropped when it stays silent.
      if (auto now = clock::now(); now >= next_check) {
        next_check = now + keepalive_interval / 3;
        if (now - l->last_read > dead_after) break;
        if (now - l->last_read > keepalive_interval && registered_) control_.push_back(build_line("PING", {"xconn"}));
      }
      if (!control_.empty()) {
        auto text = std::move(control_.front());
        control_.pop_front();
        co_await write(text);
        if (text.starts_with("QUIT")) break;
        continue;
      }
      bool due = registered_ && !paced_.empty();
      if (due && clock::now() >= next_paced_) {
        auto next = paced_.front();  // taken off only once written: a lost connection sends it again
        co_await write(next.text);
        if (!l->open) break;
        paced_.pop_front();
        next_paced_ = clock::now() + interval;
        events_.on_count("lines_sent");
        if (next.owner && --next.owner->remaining == 0) next.owner->done->set();
        continue;
      }
      if (due) events_.on_count("flood_waits");
      writer_wake_.expires_at(std::min(due ? next_paced_ : clock::time_point::max(), next_check));
      co_await sleep_on(writer_wake_);
    }
  } catch (const boost::system::system_error&) {
  }
  if (link_ == l) drop_connection();
}

void session::send_now(std::string text) {
  control_.push_back(std::move(text));
  wake_writer();
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
  wake_writer();
  co_return co_await b->done->wait(deadline) && b->remaining == 0;
}

}  // namespace irc
