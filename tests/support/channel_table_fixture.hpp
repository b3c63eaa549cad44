// The channel-table fixture: a table on a clock the test moves by hand, and data-plane sessions stood in for by
// routes the table only compares and weakly holds.
#pragma once

#include "core/channels/channel_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace xconn::test {

// A data-plane session stand-in: the table only compares and weakly holds it.
class fake_route : public channel_route {
 public:
  explicit fake_route(std::string connector_id = "conn_a") : connector_id_(std::move(connector_id)) {}
  void push(std::string packet) override { pushed.push_back(std::move(packet)); }
  void push(std::string packet, std::function<void(bool)> written) override {
    pushed.push_back(std::move(packet));
    written(true);
  }
  const std::vector<std::string>& profiles() const override { return profiles_; }
  const std::string& connector_id() const override { return connector_id_; }
  std::vector<std::string> pushed;

 private:
  std::vector<std::string> profiles_{"xagent.im.v2"};
  std::string connector_id_;
};

// A steady clock the test moves by hand.
struct manual_clock {
  channel_table::clock::time_point now = channel_table::clock::time_point{} + std::chrono::hours(1000);
  channel_table::now_fn fn() {
    return [this] { return now; };
  }
};

inline bool is_base62_id(const std::string& id, std::string_view prefix, std::size_t n = 22) {
  if (id.size() != prefix.size() + n || id.rfind(prefix, 0) != 0) return false;
  return std::all_of(id.begin() + static_cast<std::ptrdiff_t>(prefix.size()), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

class ChannelTable : public ::testing::Test {
 protected:
  static constexpr std::chrono::seconds ttl{60};

  manual_clock clock;
  channel_table table{ttl, clock.fn()};
  std::shared_ptr<fake_route> route = std::make_shared<fake_route>("conn_a");
  std::shared_ptr<fake_route> other_route = std::make_shared<fake_route>("conn_b");

  std::string open_new(std::string_view plugin = "echo") {
    auto [c, created] = table.open(plugin, "", "conn_a", route);
    EXPECT_TRUE(created);
    return c.id;
  }
  bool present(const std::string& id) const { return table.find(id) != nullptr; }
};

}  // namespace xconn::test
