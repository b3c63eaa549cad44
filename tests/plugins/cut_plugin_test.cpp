// A plugin file cut short (a copy interrupted, a full disk) in plugins.dir: dlopen would map segments past its end
// and die of SIGBUS, at a hot reload and again at every start. It is refused like any bad file instead: the server
// stays up, the file is listed in `refused`, and at a reload the old build keeps serving.
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"
#include "support/test_support.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

// The first `bytes` of a real build.
std::string cut_build(const std::filesystem::path& build, std::size_t bytes) { return read_file(build).substr(0, bytes); }

// The refusal reason of plugin id in GET /connectors ("" when not refused) and its generation (-1 when not loaded).
struct cut_listing {
  std::string refused;
  std::int64_t generation = -1;
  std::string version;
};

cut_listing cut_list(server_fixture& server, const std::string& id) {
  cut_listing out;
  auto body = http_get(server.port(), "/connectors", server.key()).json();
  if (!body.is_object()) return out;
  for (const auto& c : body.at("connectors").as_array())
    if (c.at("plugin_id") == json::value(id)) {
      out.generation = c.at("generation").to_number<std::int64_t>();
      out.version = std::string(c.at("version").as_string());
    }
  for (const auto& r : body.at("refused").as_array())
    if (r.at("plugin_id") == json::value(id)) out.refused = std::string(r.at("reason").as_string());
  return out;
}

TEST(cut_plugin, files_cut_short_at_start_are_refused_and_the_rest_serve) {
  server_fixture server({"echo.so"});
  auto dir = std::filesystem::path(server.cfg().plugins.dir);
  auto second = read_file(fixture_plugin_dir() / "second.so");
  write_file(dir / "second.so", second.substr(0, second.size() / 2));
  write_file(dir / "relay.so", cut_build(fixture_plugin_dir() / "relay.so", 4096));
  write_file(dir / "ledger.so", "");
  server.start();

  for (const auto* id : {"second", "relay", "ledger"}) {
    auto l = cut_list(server, id);
    EXPECT_EQ(l.generation, -1) << id;
    EXPECT_NE(l.refused.find("not a loadable shared library"), std::string::npos) << id << ": " << l.refused;
  }
  EXPECT_NE(cut_list(server, "second").refused.find("cut short"), std::string::npos);
  EXPECT_NE(cut_list(server, "relay").refused.find("cut short"), std::string::npos);
  EXPECT_NE(cut_list(server, "ledger").refused.find("not an ELF file"), std::string::npos);

  auto client = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(client);
  auto r = client->invoke(client->open_authenticated(), "echo_reverse", {{"text", "up"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(payload_of(*r).at("result").at("text"), "pu");
}

TEST(cut_plugin, a_cut_build_at_a_hot_reload_leaves_the_old_one_serving) {
  server_fixture server({"echo.so"});
  server.start();
  auto dir = std::filesystem::path(server.cfg().plugins.dir);
  auto client = dp_client::connect(server.port(), server.key());
  ASSERT_TRUE(client);
  auto channel = client->open_authenticated();
  ASSERT_FALSE(channel.empty());
  auto generation = cut_list(server, "echo").generation;
  ASSERT_GT(generation, 0);

  auto v2 = fixture_plugin_dir() / "echo-v2" / "echo.so";
  auto v2_size = std::filesystem::file_size(v2);
  // Deployed by rename (half of it), then written in place (4 KiB, as a copy still under way looks): both refused.
  for (std::size_t bytes : {v2_size / 2, std::size_t{4096}}) {
    if (bytes == 4096) {
      write_file(dir / "echo.so", cut_build(v2, bytes));
    } else {
      write_file(dir / ".incoming-echo.so", cut_build(v2, bytes));
      std::filesystem::rename(dir / ".incoming-echo.so", dir / "echo.so");
    }
    std::string expected = "(the file has " + std::to_string(bytes) + " bytes; cut short?)";
    ASSERT_TRUE(wait_until([&] { return cut_list(server, "echo").refused.find(expected) != std::string::npos; }, 20s))
        << bytes << ": " << cut_list(server, "echo").refused;
    auto l = cut_list(server, "echo");
    EXPECT_EQ(l.generation, generation) << bytes;
    EXPECT_EQ(l.version, "0.1.0") << bytes;
    auto health = http_get(server.port(), "/connectors/echo/health", server.key());
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.json().at("adapter").at("last_reload").at("status"), "refused");
    auto r = client->invoke(channel, "echo_reverse", {{"text", "still"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(payload_of(*r).at("result").at("text"), "llits") << bytes;
  }

  // The whole build afterwards is taken.
  write_file(dir / ".incoming-echo.so", read_file(v2));
  std::filesystem::rename(dir / ".incoming-echo.so", dir / "echo.so");
  ASSERT_TRUE(wait_until([&] { return cut_list(server, "echo").generation > generation; }, 20s));
  EXPECT_EQ(cut_list(server, "echo").version, "0.2.0");
  EXPECT_EQ(cut_list(server, "echo").refused, "");
  auto r = client->invoke(channel, "echo_reverse", {{"text", "new"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(payload_of(*r).at("result").at("text"), "wen");
}

}  // namespace
}  // namespace xconn::test
