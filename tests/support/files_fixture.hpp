// The transfer-plane fixture: the in-process server with echo, one socket, one signed-in channel, and the key,
// upload, download and /inject requests the files tests make.
#pragma once

#include "support/data_plane.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace xconn::test {

class Files : public ::testing::Test {
 protected:
  Files() : Files(std::function<void(config&)>{}) {}
  explicit Files(const std::function<void(config&)>& tweak) : server({"echo.so"}, tweak) {}

  void SetUp() override {
    server.start();
    dp = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(dp);
    channel = dp->open_authenticated();
    ASSERT_FALSE(channel.empty());
  }
  void TearDown() override {
    dp.reset();  // validates what it received while the server still runs
    server.stop();
  }

  std::map<std::string, std::string> key() const { return {{"Authorization", "Bearer " + server.key()}}; }
  std::map<std::string, std::string> key_and(const std::string& ch) const {
    auto h = key();
    h["X-XAgent-Connector-Channel-ID"] = ch;
    return h;
  }

  // POST {echo_base}/files/uploads with the key, the channel (when not empty) and a multipart Content-Type.
  http_reply post_upload(const std::string& ch, const std::string& body,
                         std::map<std::string, std::string> headers = {}) {
    auto h = ch.empty() ? key() : key_and(ch);
    h.emplace("Content-Type", multipart_type());
    for (auto& [k, v] : headers) h[k] = v;
    return http_call(server.port(), "POST", uploads, h, body);
  }
  // An upload that must succeed: its 201 body (an empty object, after a failure, when it did not).
  boost::json::object upload_ok(const std::string& data, const std::string& filename = "blob.bin",
                                std::optional<std::string> content_type = "application/octet-stream",
                                const std::string& on = "") {
    auto r = post_upload(on.empty() ? channel : on, multipart({file_part(data, filename, std::move(content_type))}));
    EXPECT_EQ(r.status, 201) << r.body;
    auto v = r.json();
    if (r.status != 201 || !v.is_object()) return {};
    return v.as_object();
  }
  std::string upload_ref(const std::string& data, const std::string& on = "") {
    return jstr(upload_ok(data, "blob.bin", "application/octet-stream", on), "file_ref");
  }

  http_reply get_with_key(const std::string& ref, std::map<std::string, std::string> extra = {}) {
    auto h = key();
    for (auto& [k, v] : extra) h[k] = v;
    return http_call(server.port(), "GET", refs(ref), h);
  }
  http_reply get_without_key(const std::string& target) { return http_call(server.port(), "GET", target); }
  bool healthy() { return http_get(server.port(), echo_base + "/health", server.key()).status == 200; }

  // POST {echo_base}/inject (echo): one inbound message.
  http_reply inject(const std::string& ch, boost::json::object emit) {
    emit["connector_channel_id"] = ch;
    return http_call(server.port(), "POST", echo_base + "/inject", key(), boost::json::serialize(emit));
  }

  server_fixture server;
  std::unique_ptr<dp_client> dp;
  std::string channel;
};

}  // namespace xconn::test
