// line_connection against a loopback server the test drives: lines framed by LF or CR LF, an oversized line ends the
// connection, reading pauses while slots are held, urgent lines go ahead of queued (paced) ones, a write the server
// never takes is dropped at its deadline, a TLS handshake that never answers ends at the connect deadline, and the
// keepalive pings a silent server and then drops it.
#include <xconn/adapter/line_connection.hpp>

#include <boost/asio/read_until.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <future>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using xconn::adapter::line_connection;
using xconn::adapter::line_options;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// A listening socket on loopback; accept() hands the test the server's end of the next connection.
struct loopback_server {
  asio::io_context& io;
  tcp::acceptor acceptor{io, {asio::ip::address_v4::loopback(), 0}};
  std::string port() const { return std::to_string(acceptor.local_endpoint().port()); }
  std::future<tcp::socket> accept() { return acceptor.async_accept(asio::use_future); }
};

// Runs the loop until ready() or the bound passes.
template <class Ready>
bool run_until(asio::io_context& io, Ready ready, clock_type::duration bound = 5s) {
  auto end = clock_type::now() + bound;
  while (!ready() && clock_type::now() < end) {
    io.restart();
    io.run_for(5ms);
  }
  return ready();
}

template <class T>
std::future<T> start(asio::io_context& io, asio::awaitable<T> work) {
  return asio::co_spawn(io, std::move(work), asio::use_future);
}

template <class T>
bool is_ready(std::future<T>& f) {
  return f.wait_for(0s) == std::future_status::ready;
}

struct connected {
  asio::io_context io;
  loopback_server server{io};
  std::shared_ptr<line_connection> client;
  tcp::socket peer{io};

  explicit connected(line_options options) {
    options.host = "127.0.0.1";
    options.port = server.port();
    client = std::make_shared<line_connection>(io, std::move(options));
    auto accepted = server.accept();
    auto connecting = start(io, client->connect());
    EXPECT_TRUE(run_until(io, [&] { return is_ready(accepted) && is_ready(connecting); }));
    connecting.get();
    peer = accepted.get();
  }
  void say(const std::string& text) { asio::write(peer, asio::buffer(text)); }
  std::optional<std::string> read() {
    auto line = start(io, client->read_line());
    EXPECT_TRUE(run_until(io, [&] { return is_ready(line); }));
    return line.get();
  }
  // What the server received, until it holds `lines` line ends.
  std::string received(std::size_t lines) {
    std::string got;
    char chunk[1024];
    peer.non_blocking(true);
    run_until(io, [&] {
      boost::system::error_code ec;
      auto n = peer.read_some(asio::buffer(chunk), ec);
      if (!ec) got.append(chunk, n);
      return std::size_t(std::count(got.begin(), got.end(), '\n')) >= lines;
    });
    return got;
  }
};

TEST(line_connection, frames_lines_by_lf_or_crlf_across_reads) {
  connected c({});
  c.say("first\r\nsec");
  c.say("ond\nthird\n");
  EXPECT_EQ(c.read(), "first");
  EXPECT_EQ(c.read(), "second");
  EXPECT_EQ(c.read(), "third");
  c.peer.close();
  EXPECT_EQ(c.read(), std::nullopt);
}

TEST(line_connection, refuses_a_line_past_the_cap) {
  connected c({.max_line_bytes = 16});
  c.say("short\n" + std::string(100, 'x'));
  EXPECT_EQ(c.read(), "short");
  EXPECT_EQ(c.read(), std::nullopt);
  EXPECT_FALSE(c.client->open());
}

TEST(line_connection, pauses_reading_while_slots_are_held) {
  int pauses = 0;
  connected c({.max_unanswered = 1, .count = [&](const char* what) { pauses += std::string(what) == "read_pauses"; }});
  c.say("one\ntwo\n");
  EXPECT_EQ(c.read(), "one");
  auto slot = c.client->hold();
  auto next = start(c.io, c.client->read_line());
  EXPECT_FALSE(run_until(c.io, [&] { return is_ready(next); }, 200ms));
  EXPECT_EQ(pauses, 1);
  slot.reset();
  ASSERT_TRUE(run_until(c.io, [&] { return is_ready(next); }));
  EXPECT_EQ(next.get(), "two");
}

TEST(line_connection, writes_urgent_lines_first_and_queued_ones_paced_in_order) {
  connected c({.min_gap = 60ms});
  auto began = clock_type::now();
  auto a = start(c.io, c.client->write("q1"));
  auto b = start(c.io, c.client->write("q2"));
  auto d = start(c.io, c.client->write("q3"));
  c.client->send("u1");
  c.client->send("u2");
  EXPECT_EQ(c.received(5), "u1\nu2\nq1\nq2\nq3\n");
  ASSERT_TRUE(run_until(c.io, [&] { return is_ready(a) && is_ready(b) && is_ready(d); }));
  EXPECT_TRUE(a.get() && b.get() && d.get());
  EXPECT_GE(clock_type::now() - began, 120ms);  // two gaps between three queued lines
}

TEST(line_connection, drops_a_write_the_server_never_takes_at_its_deadline) {
  connected c({.write_timeout = 300ms});
  std::string huge(8 << 20, 'x');  // far past the socket buffers; the server reads nothing
  auto began = clock_type::now();
  auto written = start(c.io, c.client->write(huge));
  ASSERT_TRUE(run_until(c.io, [&] { return is_ready(written); }));
  EXPECT_FALSE(written.get());
  EXPECT_FALSE(c.client->open());
  EXPECT_LT(clock_type::now() - began, 3s);
}

TEST(line_connection, keepalive_pings_a_silent_server_then_drops_it) {
  connected c({.ping = "PING x", .ping_after = 150ms, .dead_after = 450ms});
  auto line = start(c.io, c.client->read_line());
  EXPECT_EQ(c.received(1), "PING x\n");
  ASSERT_TRUE(run_until(c.io, [&] { return is_ready(line); }, 3s));
  EXPECT_EQ(line.get(), std::nullopt);
}

TEST(line_connection, gives_up_a_tls_handshake_at_the_connect_deadline) {
  asio::io_context io;
  loopback_server server{io};
  asio::ssl::context tls(asio::ssl::context::tls_client);
  auto client = std::make_shared<line_connection>(
      io, line_options{.host = "127.0.0.1", .port = server.port(), .tls = &tls, .connect_timeout = 300ms});
  auto accepted = server.accept();  // takes the connection, never answers the handshake
  auto began = clock_type::now();
  auto connecting = start(io, client->connect());
  ASSERT_TRUE(run_until(io, [&] { return is_ready(connecting); }));
  EXPECT_THROW(connecting.get(), boost::system::system_error);
  EXPECT_LT(clock_type::now() - began, 3s);
}

}  // namespace
