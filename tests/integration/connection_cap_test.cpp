// server.max_connections (docs/protocol.md "Limits"): connections past the cap are closed as soon as they are accepted,
// reported once per 10 s; a WebSocket keeps the slot of the HTTP connection it came from, and a closed connection
// gives its slot back.
#include "support/data_plane.hpp"
#include "support/log_capture.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>

namespace xconn::test {
namespace {
using namespace std::chrono_literals;
namespace asio = boost::asio;

std::unique_ptr<asio::ip::tcp::socket> idle_connection(asio::io_context& io, unsigned short port) {
  auto s = std::make_unique<asio::ip::tcp::socket>(io);
  s->connect({asio::ip::make_address("127.0.0.1"), port});
  return s;
}

// True when the server ends the connection (EOF or reset) without a byte, within the deadline.
bool closed_by_server(asio::ip::tcp::socket& s, std::chrono::seconds deadline) {
  return wait_until(
      [&] {
        boost::system::error_code ec;
        s.non_blocking(true);
        char byte = 0;
        auto n = s.read_some(asio::buffer(&byte, 1), ec);
        return n == 0 && ec && ec != asio::error::would_block;
      },
      deadline);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(connection_cap, connections_past_max_connections_are_closed_and_slots_come_back) {
  log_capture logs;
  server_fixture server({"echo.so"}, [](config& c) { c.server.max_connections = 3; });
  server.start();
  asio::io_context io;

  // A data-plane socket holds one slot, two idle HTTP connections the others.
  auto agent = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(agent);
  auto idle1 = idle_connection(io, server.port());
  auto idle2 = idle_connection(io, server.port());
  ASSERT_TRUE(wait_until([&] {
    auto extra = idle_connection(io, server.port());
    return closed_by_server(*extra, 1s);
  }, 10s));
  // A burst past the cap: every one is closed, the log says so once.
  for (int i = 0; i < 20; ++i) {
    auto extra = idle_connection(io, server.port());
    EXPECT_TRUE(closed_by_server(*extra, 10s)) << i;
  }
  EXPECT_EQ(occurrences(logs.text(), "server.max_connections"), 1u) << logs.text();
  // The WebSocket still works at the cap.
  EXPECT_FALSE(agent->open_authenticated().empty());

  // Closing an idle connection gives its slot back; closing the WebSocket gives its own.
  idle1.reset();
  EXPECT_TRUE(wait_until([&] { return http_get(server.port(), "/connectors/echo/health", server.key()).status == 200; },
                         10s));
  agent.reset();
  idle2.reset();
  auto held1 = idle_connection(io, server.port());
  auto held2 = idle_connection(io, server.port());
  EXPECT_TRUE(wait_until([&] { return http_get(server.port(), "/connectors/echo/health", server.key()).status == 200; },
                         10s));
}

}  // namespace
}  // namespace xconn::test
