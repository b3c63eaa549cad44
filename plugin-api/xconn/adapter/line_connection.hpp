// One TCP (or TLS) connection to a target that speaks lines (IRC, a chat server): connect with a deadline, lines read
// up to a byte cap and no faster than the host takes their emits (reading pauses while max_unanswered are held), and
// one ordered writer: urgent lines first, then queued ones spaced min_gap apart, each write bounded by write_timeout
// (a write that cannot complete closes the connection and is dropped). An optional keepalive writes a ping line when
// the target said nothing for a while and closes a connection that stays silent. Reconnecting is the owner's loop,
// with retry_backoff between tries. Everything runs on one event loop; only a held slot may be let go elsewhere.
#pragma once

#include <xconn/adapter/tls_client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace xconn::adapter {

struct line_options {
  std::string host{}, port{};
  boost::asio::ssl::context* tls = nullptr;  // TLS verified for host; nullptr: plain TCP
  std::chrono::steady_clock::duration connect_timeout = std::chrono::seconds(15);
  std::size_t max_line_bytes = 8192;  // a longer line ends the connection: not the target's protocol
  std::size_t max_unanswered = 64;    // held slots (emits in flight) at which reading pauses
  std::chrono::steady_clock::duration write_timeout = std::chrono::seconds(30);
  std::chrono::steady_clock::duration min_gap{};  // between queued (paced) lines
  std::string line_end = "\n";
  std::string ping{};                                    // "": no keepalive
  std::chrono::steady_clock::duration ping_after{}, dead_after{};  // silence before a ping, before giving up
  std::function<void(const char* what)> count{};  // counters: read_pauses, flood_waits, lines_sent
};

class line_connection : public std::enable_shared_from_this<line_connection> {
 public:
  using clock = std::chrono::steady_clock;
  template <class T>
  using awaitable = boost::asio::awaitable<T>;

  line_connection(boost::asio::io_context& io, line_options options)
      : io_(io), options_(std::move(options)), wake_writer_(io), wake_reader_(io), write_deadline_(io) {}

  // Connects (and completes TLS) within connect_timeout, then starts the writer; throws system_error on failure.
  awaitable<void> connect() {
    auto self = shared_from_this();
    boost::beast::tcp_stream plain(io_);
    plain.expires_after(options_.connect_timeout);
    boost::asio::ip::tcp::resolver resolver(io_);
    co_await plain.async_connect(co_await resolver.async_resolve(options_.host, options_.port, use), use);
    if (options_.tls) {
      tls_ = co_await start_tls(plain, *options_.tls, options_.host);
      boost::beast::get_lowest_layer(*tls_).expires_never();
    } else {
      plain_ = std::make_unique<boost::beast::tcp_stream>(std::move(plain));
      plain_->expires_never();
    }
    open_ = true;
    last_read_ = clock::now();
    boost::asio::co_spawn(io_, write_loop(self), boost::asio::detached);
  }

  // The next line without its end (CR LF or LF), once fewer than max_unanswered slots are held; nullopt when the
  // connection closed, failed or sent a line past max_line_bytes.
  awaitable<std::optional<std::string>> read_line() {
    auto self = shared_from_this();
    if (held_ >= options_.max_unanswered && options_.count) options_.count("read_pauses");
    while (open_ && held_ >= options_.max_unanswered) {
      last_read_ = clock::now();  // the keepalive must not take a paused reader for a silent target
      wake_reader_.expires_after(std::chrono::seconds(10));
      co_await wake_reader_.async_wait(tuple);
    }
    for (;;) {
      if (!open_) co_return std::nullopt;
      if (auto end = in_.find('\n'); end != std::string::npos) {
        std::string line = in_.substr(0, end);
        in_.erase(0, end + 1);
        if (line.ends_with('\r')) line.pop_back();
        if (line.size() > options_.max_line_bytes) break;
        co_return line;
      }
      if (in_.size() > options_.max_line_bytes) break;
      char chunk[4096];
      auto [error, n] = tls_ ? co_await tls_->async_read_some(boost::asio::buffer(chunk), tuple)
                             : co_await plain_->async_read_some(boost::asio::buffer(chunk), tuple);
      if (error) break;
      in_.append(chunk, n);
      last_read_ = clock::now();
    }
    close();
    co_return std::nullopt;
  }

  // An urgent line (a PONG, a sign-in): written ahead of queued ones, in the order sent; not awaited.
  void send(std::string line) {
    urgent_.push_back(std::move(line) + options_.line_end);
    wake_writer_.cancel();
  }
  // A queued line, spaced min_gap after the previous one: whether it was written (false: the connection ended first).
  awaitable<bool> write(std::string line) {
    auto self = shared_from_this();
    auto item = std::make_shared<queued>(std::move(line) + options_.line_end, io_);
    queued_.push_back(item);
    wake_writer_.cancel();
    while (!item->settled && open_) co_await item->done.async_wait(tuple);
    co_return item->written;
  }

  // One emit in flight: reading pauses at max_unanswered held slots. Let it go (on any thread) once answered.
  std::shared_ptr<void> hold() {
    ++held_;
    return std::shared_ptr<void>(nullptr, [weak = weak_from_this(), &io = io_](void*) {
      boost::asio::post(io, [weak] {
        if (auto self = weak.lock(); self && self->held_ > 0 && --self->held_ < self->options_.max_unanswered)
          self->wake_reader_.cancel();
      });
    });
  }

  // Closes at once: reads end, unwritten lines are given up. On the loop (or with the loop stopped).
  void close() {
    if (!open_) return;  // also before connect() finished: its own deadline ends it
    open_ = false;
    boost::system::error_code ignored;
    auto& socket = tls_ ? boost::beast::get_lowest_layer(*tls_).socket() : plain_->socket();
    socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
    wake_writer_.cancel();
    wake_reader_.cancel();
  }
  // Closes once the urgent lines already sent were written (a QUIT); queued ones are given up.
  void close_after_writes() {
    closing_ = true;
    wake_writer_.cancel();
  }

  bool open() const { return open_; }

 private:
  static constexpr auto use = boost::asio::use_awaitable;
  static constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
  struct queued {
    queued(std::string t, boost::asio::io_context& io) : text(std::move(t)), done(io, clock::time_point::max()) {}
    std::string text;
    boost::asio::steady_timer done;  // cancelled when settled
    bool settled = false, written = false;
  };

  // Bounded by write_timeout: a target that takes nothing more (its window full) ends the connection. (Its own
  // timer, not the stream's expiry, which a read started meanwhile would inherit.)
  awaitable<bool> put(const std::string& text) {
    write_deadline_.expires_after(options_.write_timeout);
    write_deadline_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
      if (auto self = weak.lock(); self && !ec) self->close();
    });
    auto [error, n] = tls_ ? co_await boost::asio::async_write(*tls_, boost::asio::buffer(text), tuple)
                           : co_await boost::asio::async_write(*plain_, boost::asio::buffer(text), tuple);
    write_deadline_.cancel();
    if (error) close();
    co_return !error && open_;
  }

  static void settle(queued& item, bool written) {
    item.settled = true;
    item.written = written;
    item.done.cancel();
  }

  awaitable<void> write_loop(std::shared_ptr<line_connection> self) {  // self: the connection lives while it writes
    (void)self;
    auto check_every = options_.ping_after / 3;
    auto next_check = clock::now() + check_every;
    clock::time_point next_queued{};
    while (open_) {
      auto now = clock::now();
      if (!options_.ping.empty() && now >= next_check) {
        next_check = now + check_every;
        if (now - last_read_ > options_.dead_after) break;
        if (now - last_read_ > options_.ping_after) urgent_.push_back(options_.ping + options_.line_end);
      }
      if (!urgent_.empty()) {
        auto text = std::move(urgent_.front());
        urgent_.pop_front();
        if (!co_await put(text)) break;
        continue;
      }
      if (closing_) break;
      if (!queued_.empty() && now >= next_queued) {
        auto item = queued_.front();
        queued_.pop_front();
        bool written = co_await put(item->text);
        settle(*item, written);
        if (!written) break;
        if (options_.count) options_.count("lines_sent");
        next_queued = clock::now() + options_.min_gap;
        continue;
      }
      if (!queued_.empty() && options_.count) options_.count("flood_waits");
      auto until = queued_.empty() ? clock::time_point::max() : next_queued;
      if (!options_.ping.empty()) until = std::min(until, next_check);
      wake_writer_.expires_at(until);
      co_await wake_writer_.async_wait(tuple);
    }
    close();
    for (auto& item : queued_) settle(*item, false);
    queued_.clear();
    urgent_.clear();
  }

  boost::asio::io_context& io_;
  line_options options_;
  std::unique_ptr<boost::beast::tcp_stream> plain_;
  std::unique_ptr<tls_stream> tls_;
  bool open_ = false, closing_ = false;
  clock::time_point last_read_{};
  std::string in_;
  std::deque<std::string> urgent_;
  std::deque<std::shared_ptr<queued>> queued_;
  boost::asio::steady_timer wake_writer_, wake_reader_, write_deadline_;
  std::size_t held_ = 0;
};

}  // namespace xconn::adapter
