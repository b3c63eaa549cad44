// descriptor_violation and binding_violation: the checks a descriptor passes before the host sends it, and a
// plugin's binding before the host keeps it.
#include "core/channels/descriptor.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "support/descriptor_samples.hpp"
#include "support/server_fixture.hpp"

namespace xconn {
namespace {
namespace json = boost::json;
using test::both_profiles;
using test::make_channel;
using test::sample;

// descriptor_violation -----------------------------------------------------------------------------------------

json::object good_descriptor() {
  return build_descriptor({sample(), make_channel(true, {{"display_name", "Alice"}, {"account_hint", "al***"}}),
                           both_profiles});
}

const std::string channel_id = make_channel(false).id;

// Edits a good descriptor and expects descriptor_violation to name `what`.
void expect_violation(const std::function<void(json::object&)>& edit, std::string_view what) {
  auto d = good_descriptor();
  edit(d);
  auto v = descriptor_violation(d, sample(), channel_id);
  EXPECT_NE(v, "") << "accepted " << json::serialize(d);
  EXPECT_NE(v.find(what), std::string::npos) << "'" << v << "' should mention " << what;
}

json::object& conn(json::object& d) { return d["connection"].as_object(); }
json::object& target(json::object& d) { return d["target"].as_object(); }

TEST(DescriptorViolation, GoodDescriptorPasses) {
  EXPECT_EQ(descriptor_violation(good_descriptor(), sample(), channel_id), "");
}

TEST(DescriptorViolation, Schema) {
  expect_violation([](auto& d) { d["schema"] = "xagent.connection/v1"; }, "schema");
  expect_violation([](auto& d) { d.erase("schema"); }, "schema");
  expect_violation([](auto& d) { d["schema"] = 2; }, "schema");
}

TEST(DescriptorViolation, Connection) {
  expect_violation([](auto& d) { d.erase("connection"); }, "connection");
  expect_violation([](auto& d) { d["connection"] = json::array{}; }, "connection");
}

TEST(DescriptorViolation, CardId) {
  expect_violation([](auto& d) { conn(d)["connector_card_id"] = "im.other"; }, "connector_card_id");
  expect_violation([](auto& d) { conn(d).erase("connector_card_id"); }, "connector_card_id");
  expect_violation([](auto& d) { conn(d)["connector_card_id"] = ""; }, "connector_card_id");
}

TEST(DescriptorViolation, ConnectorId) {
  expect_violation([](auto& d) { conn(d)["connector_id"] = ""; }, "connector_id");
  expect_violation([](auto& d) { conn(d).erase("connector_id"); }, "connector_id");
  expect_violation([](auto& d) { conn(d)["connector_id"] = 1; }, "connector_id");
}

TEST(DescriptorViolation, ChannelId) {
  expect_violation([](auto& d) { conn(d)["connector_channel_id"] = "cch_other"; }, "connector_channel_id");
  expect_violation([](auto& d) { conn(d).erase("connector_channel_id"); }, "connector_channel_id");
  auto d = good_descriptor();
  EXPECT_NE(descriptor_violation(d, sample(), "cch_another_channel"), "");
}

TEST(DescriptorViolation, TargetType) {
  expect_violation([](auto& d) { conn(d)["target_type"] = "chat"; }, "target_type");
  expect_violation([](auto& d) { conn(d)["target_type"] = "IM"; }, "target_type");
  expect_violation([](auto& d) { conn(d).erase("target_type"); }, "target_type");
  for (auto t : {"im", "email", "calendar", "ticket", "device"}) {
    auto d = good_descriptor();
    conn(d)["target_type"] = t;
    EXPECT_EQ(descriptor_violation(d, sample(), channel_id), "") << t;
  }
}

TEST(DescriptorViolation, Status) {
  expect_violation([](auto& d) { conn(d)["status"] = "online"; }, "status");
  expect_violation([](auto& d) { conn(d).erase("status"); }, "status");
  for (auto s : {"created", "authenticating", "connected", "degraded", "offline", "expired", "revoked", "error"}) {
    auto d = good_descriptor();
    conn(d)["status"] = s;
    EXPECT_EQ(descriptor_violation(d, sample(), channel_id), "") << s;
  }
}

TEST(DescriptorViolation, Profiles) {
  expect_violation([](auto& d) { conn(d)["profiles"] = json::array{}; }, "profiles");
  expect_violation([](auto& d) { conn(d).erase("profiles"); }, "profiles");
  expect_violation([](auto& d) { conn(d)["profiles"] = "xagent.im.v2"; }, "profiles");
  expect_violation([](auto& d) { conn(d)["profiles"] = json::array{"xagent.im.v2", "xagent.im.v2"}; }, "profiles");
  expect_violation([](auto& d) { conn(d)["profiles"] = json::array{"xagent.im.v2", 3}; }, "profiles");
  expect_violation([](auto& d) { conn(d)["profiles"] = json::array{"xagent.device.v1"}; }, "profiles");
  expect_violation([](auto& d) { conn(d)["profiles"] = json::array{"xagent.im.v2", "xagent.im.v3"}; }, "profiles");
}

TEST(DescriptorViolation, Target) {
  expect_violation([](auto& d) { d.erase("target"); }, "target.provider");
  expect_violation([](auto& d) { target(d).erase("provider"); }, "target.provider");
  expect_violation([](auto& d) { target(d)["provider"] = ""; }, "target.provider");
  expect_violation([](auto& d) { target(d)["token"] = "secret-token"; }, "display-level");
  expect_violation([](auto& d) { target(d)["account_id"] = "12345"; }, "display-level");
  expect_violation([](auto& d) { target(d)["account_hint"] = json::object{}; }, "string");
  expect_violation([](auto& d) { target(d)["display_name"] = 5; }, "string");
  expect_violation([](auto& d) { target(d).erase("display_name"); }, "display_name");
  expect_violation([](auto& d) { target(d)["display_name"] = ""; }, "display_name");
}

TEST(DescriptorViolation, Tools) {
  expect_violation([](auto& d) { d["tools"] = json::object{}; }, "tools");
  expect_violation([](auto& d) { d["tools"].as_array().front().as_object().erase("tool_id"); }, "tool_id");
  expect_violation([](auto& d) { d["tools"].as_array().front().as_object()["tool_id"] = ""; }, "tool_id");
  expect_violation([](auto& d) { d["tools"].as_array().emplace_back("sample_send"); }, "tool_id");
  expect_violation(
      [](auto& d) {
        d["tools"].as_array().emplace_back(
            json::object{{"tool_id", "not_in_card"}, {"status", "available"}, {"target_permission_state", "granted"}});
      },
      "not in the card");
  auto first = [](json::object& d) -> json::object& { return d["tools"].as_array().front().as_object(); };
  expect_violation([&](auto& d) { first(d).erase("status"); }, "status");
  expect_violation([&](auto& d) { first(d)["status"] = "online"; }, "status");
  expect_violation([&](auto& d) { first(d)["status"] = 1; }, "status");
  expect_violation([&](auto& d) { first(d)["target_permission_state"] = "maybe"; }, "target_permission_state");
  expect_violation([&](auto& d) { first(d)["target_permission_state"] = nullptr; }, "target_permission_state");
  {
    auto d = good_descriptor();
    first(d).erase("target_permission_state");  // optional in the spec
    EXPECT_EQ(descriptor_violation(d, sample(), channel_id), "");
  }
  // Tools are optional in the descriptor.
  auto d = good_descriptor();
  d.erase("tools");
  EXPECT_EQ(descriptor_violation(d, sample(), channel_id), "");
}

// What our check lets through must also pass the spec's JSON Schema: the host sends what passes its check.
TEST(DescriptorViolation, AcceptsNothingTheSchemaRefuses) {
  std::vector<std::pair<std::string, std::function<void(json::object&)>>> edits{
      {"target without display_name", [](auto& d) { target(d).erase("display_name"); }},
      {"tool without status", [](auto& d) { d["tools"].as_array().front().as_object().erase("status"); }},
      {"tool with an unknown status", [](auto& d) { d["tools"].as_array().front().as_object()["status"] = "online"; }},
      {"tool with an unknown permission state",
       [](auto& d) { d["tools"].as_array().front().as_object()["target_permission_state"] = "maybe"; }},
  };
  for (const auto& [name, edit] : edits) {
    auto d = good_descriptor();
    edit(d);
    auto schema = test::schema_violations("xagent.connection.v2", json::serialize(d));
    ASSERT_NE(schema, "") << name << ": the schema should refuse " << json::serialize(d);
    EXPECT_NE(descriptor_violation(d, sample(), channel_id), "")
        << name << ": descriptor_violation accepts what the schema refuses: " << schema;
  }
}

// binding_violation --------------------------------------------------------------------------------------------

TEST(BindingViolation, AcceptsGoodBindings) {
  std::vector<json::object> good{
      {},
      {{"display_name", "Alice"}},
      {{"account_hint", "al***@x"}},
      {{"display_name", std::string(256, 'x')}, {"account_hint", std::string(256, 'y')}},
      {{"tools", json::array{}}},
      {{"tools", json::array{json::object{{"tool_id", "sample_send"}, {"status", "available"}}}}},
  };
  for (auto st : {"available", "unavailable", "denied_by_target", "requires_reauth", "not_supported"})
    for (auto perm : {"unknown", "granted", "denied", "requires_reauth"})
      good.push_back({{"tools", json::array{json::object{
                                    {"tool_id", "sample_status"}, {"status", st}, {"target_permission_state", perm}}}}});
  for (const auto& b : good) EXPECT_EQ(binding_violation(b, sample()), "") << json::serialize(b);
}

void expect_binding_refused(const json::object& b, std::string_view what) {
  auto v = binding_violation(b, sample());
  EXPECT_NE(v, "") << "accepted " << json::serialize(b);
  EXPECT_NE(v.find(what), std::string::npos) << "'" << v << "' should mention " << what;
}

TEST(BindingViolation, RefusesUnknownKeys) {
  expect_binding_refused({{"token", "abc"}}, "token");
  expect_binding_refused({{"display_name", "A"}, {"account_id", "123"}}, "account_id");
  expect_binding_refused({{"provider", "x"}}, "provider");
}

TEST(BindingViolation, RefusesNonStringsAndBadLengths) {
  expect_binding_refused({{"display_name", 5}}, "display_name");
  expect_binding_refused({{"display_name", nullptr}}, "display_name");
  expect_binding_refused({{"display_name", ""}}, "display_name");
  expect_binding_refused({{"display_name", std::string(257, 'x')}}, "display_name");
  expect_binding_refused({{"account_hint", json::array{"x"}}}, "account_hint");
  expect_binding_refused({{"account_hint", std::string(1000, 'y')}}, "account_hint");
}

TEST(BindingViolation, RefusesBadTools) {
  auto with = [](json::value entry) { return json::object{{"tools", json::array{std::move(entry)}}}; };
  expect_binding_refused({{"tools", json::object{}}}, "tools");
  expect_binding_refused({{"tools", "sample_send"}}, "tools");
  expect_binding_refused(with("sample_send"), "tool_id");
  expect_binding_refused(with(json::object{{"status", "available"}}), "tool_id");
  expect_binding_refused(with(json::object{{"tool_id", "nope"}, {"status", "available"}}), "tool_id");
  expect_binding_refused(with(json::object{{"tool_id", 1}, {"status", "available"}}), "tool_id");
  expect_binding_refused(with(json::object{{"tool_id", "sample_send"}}), "status");
  expect_binding_refused(with(json::object{{"tool_id", "sample_send"}, {"status", "granted"}}), "status");
  expect_binding_refused(with(json::object{{"tool_id", "sample_send"}, {"status", true}}), "status");
  expect_binding_refused(
      with(json::object{{"tool_id", "sample_send"}, {"status", "available"}, {"target_permission_state", "yes"}}),
      "target_permission_state");
  expect_binding_refused(
      with(json::object{{"tool_id", "sample_send"}, {"status", "available"}, {"target_permission_state", 1}}),
      "target_permission_state");
}

}  // namespace
}  // namespace xconn
