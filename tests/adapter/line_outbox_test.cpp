// line_outbox against a loopback server: queued lines wait until a connection is fed, go out in order and answer
// their writer; lines queued while no connection is fed go out on the next one fed; a deadline answers false while
// the lines stay queued; give_up answers every writer false.
#include <xconn/adapter/line_outbox.hpp>

#include <boost/asio/read_until.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <future>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using xconn::adapter::line_connection;
using xconn::adapter::line_outbox;
using namespace std::chrono_literals;
using outbox_clock = std::chrono::steady_clock;

template <class Ready>
bool outbox_run_until(asio::io_context& io, Ready ready, outbox_clock::duration bound = 5s) {
  for (auto end = outbox_clock::now() + bound; !ready() && outbox_clock::now() < end;) {
    io.restart();
    io.run_for(5ms);
  }
  return ready();
}

template <class T>
bool outbox_ready(std::future<T>& f) {
  return f.wait_for(0s) == std::future_status::ready;
}

struct outbox_rig {
  asio::io_context io;
  tcp::acceptor acceptor{io, {asio::ip::address_v4::loopback(), 0}};
  line_outbox outbox{io};

  // A connected line_connection and the server's end of it.
  std::pair<std::shared_ptr<line_connection>, std::shared_ptr<tcp::socket>> connect() {
    auto accepted = acceptor.async_accept(asio::use_future);
    auto c = std::make_shared<line_connection>(
        io, xconn::adapter::line_options{.host = "127.0.0.1", .port = std::to_string(acceptor.local_endpoint().port())});
    auto connected = asio::co_spawn(io, c->connect(), asio::use_future);
    EXPECT_TRUE(outbox_run_until(io, [&] { return outbox_ready(connected) && outbox_ready(accepted); }));
    connected.get();
    return {c, std::make_shared<tcp::socket>(accepted.get())};
  }
  // The next line the server read from peer.
  std::string read(tcp::socket& peer, std::string& in) {
    auto got = asio::async_read_until(peer, asio::dynamic_buffer(in), '\n', asio::use_future);
    if (!outbox_run_until(io, [&] { return outbox_ready(got); })) return "(nothing)";
    auto n = got.get();
    auto line = in.substr(0, n - 1);
    in.erase(0, n);
    return line;
  }
};

TEST(line_outbox, writes_only_once_fed_and_in_order) {
  outbox_rig rig;
  auto [c, peer] = rig.connect();
  auto written = asio::co_spawn(rig.io, rig.outbox.write({"one", "two"}, outbox_clock::now() + 5s), asio::use_future);
  rig.io.restart();
  rig.io.run_for(50ms);
  EXPECT_FALSE(outbox_ready(written));  // nothing fed yet
  EXPECT_EQ(peer->available(), 0u);
  rig.outbox.feed(c);
  std::string in;
  EXPECT_EQ(rig.read(*peer, in), "one");
  EXPECT_EQ(rig.read(*peer, in), "two");
  ASSERT_TRUE(outbox_run_until(rig.io, [&] { return outbox_ready(written); }));
  EXPECT_TRUE(written.get());
}

TEST(line_outbox, lines_wait_out_a_lost_connection) {
  outbox_rig rig;
  auto [first, first_peer] = rig.connect();
  rig.outbox.feed(first);
  first->close();
  rig.outbox.stop();
  auto written = asio::co_spawn(rig.io, rig.outbox.write({"later"}, outbox_clock::now() + 5s), asio::use_future);
  rig.io.restart();
  rig.io.run_for(30ms);
  EXPECT_FALSE(outbox_ready(written));
  auto [second, second_peer] = rig.connect();
  rig.outbox.feed(second);
  std::string in;
  EXPECT_EQ(rig.read(*second_peer, in), "later");
  ASSERT_TRUE(outbox_run_until(rig.io, [&] { return outbox_ready(written); }));
  EXPECT_TRUE(written.get());
}

TEST(line_outbox, a_deadline_and_give_up_answer_false) {
  outbox_rig rig;
  auto late = asio::co_spawn(rig.io, rig.outbox.write({"a"}, outbox_clock::now() + 30ms), asio::use_future);
  ASSERT_TRUE(outbox_run_until(rig.io, [&] { return outbox_ready(late); }));
  EXPECT_FALSE(late.get());  // still queued, but not written in time
  auto waiting = asio::co_spawn(rig.io, rig.outbox.write({"b"}, outbox_clock::now() + 60s), asio::use_future);
  rig.io.restart();
  rig.io.run_for(10ms);
  rig.outbox.give_up();
  ASSERT_TRUE(outbox_run_until(rig.io, [&] { return outbox_ready(waiting); }, 1s));
  EXPECT_FALSE(waiting.get());
  auto empty = asio::co_spawn(rig.io, rig.outbox.write({}, outbox_clock::now() + 60s), asio::use_future);
  ASSERT_TRUE(outbox_run_until(rig.io, [&] { return outbox_ready(empty); }, 1s));
  EXPECT_TRUE(empty.get());  // nothing to write is written at once
}

}  // namespace
