// A tool that reports progress and returns a file (spec §8.20; Device Profile v1 §6), on the real server through
// the fixture relay: tool.progress.push reaches the invoking socket before the ack, an out-of-range report is
// refused, the result's file comes back described by the store with a signed download_url whose bytes are exactly
// what the plugin stored without waiting, and a file_ref that is not the channel's is refused.
#include "support/files_helpers.hpp"
#include "support/relay_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

class tool_files : public relay_channel_test {};

TEST_F(tool_files, a_long_tool_pushes_progress_and_returns_its_file_with_a_signed_download_url) {
  const std::size_t size = 5u << 20;  // past the store's backlog: the plugin's writes find it behind
  auto invoke = dp->send("tool.invoke",
                         {{"tool_id", "relay_capture"}, {"arguments", {{"bytes", size}}},
                          {"context", {{"tool_call_id", "call-41"}}}},
                         channel);
  auto ack = dp->answer(invoke, 30s);
  ASSERT_TRUE(ack);
  ASSERT_EQ(error_code(*ack), "") << json::serialize(*ack);
  auto result = payload_of(*ack)["result"].as_object();
  EXPECT_EQ(json::serialize(result.at("progress_taken")), "[true,false]");

  auto progress = dp->next_push("tool.progress.push", channel, 1s);
  ASSERT_TRUE(progress) << "no tool.progress.push";
  EXPECT_FALSE(progress->contains("request_id")) << "a client matching answers by request_id would take it for the ack";
  EXPECT_EQ(json::serialize(payload_of(*progress)),
            R"({"tool_id":"relay_capture","status":"running","tool_call_id":"call-41","message":"capturing","progress":2.5E-1})");
  EXPECT_FALSE(dp->next_push("tool.progress.push", channel, 200ms)) << "the refused report was pushed";

  const auto& files = result.at("files").as_array();
  ASSERT_EQ(files.size(), 1u);
  const auto& item = files[0].as_object();
  EXPECT_EQ(text_of(item, "filename"), "capture.bin");
  EXPECT_EQ(item.at("byte_size").to_number<std::size_t>(), size);
  auto url = parse_url(text_of(item, "download_url"));
  ASSERT_TRUE(url.ok) << json::serialize(item);
  auto fetched = http_call(server.port(), "GET", url.target());
  ASSERT_EQ(fetched.status, 200);
  ASSERT_EQ(fetched.body.size(), size);
  bool same = true;
  for (std::size_t i = 0; i < size && same; ++i) same = static_cast<unsigned char>(fetched.body[i]) == i % 251;
  EXPECT_TRUE(same) << "the stored bytes differ from what the plugin wrote";
}

TEST_F(tool_files, a_result_naming_a_file_that_is_not_the_channels_is_refused) {
  auto ack = dp->invoke(channel, "relay_capture", {{"ref", "fr_0000000000000000000000"}});
  ASSERT_TRUE(ack);
  EXPECT_EQ(error_code(*ack), "tool_invoke_failed") << json::serialize(*ack);
  EXPECT_FALSE(payload_of(*ack).contains("result"));
}

}  // namespace
}  // namespace xconn::test
