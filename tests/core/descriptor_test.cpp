#include "core/channels/descriptor.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "support/server_fixture.hpp"

namespace xconn {
namespace {
namespace json = boost::json;

const char* const manifest_json = R"json({
  "id": "sample-1",
  "card": {
    "connector_card_id": "im.sample_bot",
    "connector": {"name": "Sample", "version": "1.2.3", "vendor": "xconn tests"},
    "supports": {
      "user_channel_mode": "multiple",
      "target_types": ["im"],
      "targets": [{"target_type": "im", "provider": "sample", "label": "Sample"}],
      "profiles": ["xagent.im.v1", "xagent.im.v2"]
    },
    "tools": [
      {"tool_id": "sample_send", "profile": "xagent.im.v2", "title": "Send", "input_schema": {"type": "object"}},
      {"tool_id": "sample_status", "profile": "xagent.im.v2", "title": "Status", "input_schema": {"type": "object"}},
      {"tool_id": "sample_legacy", "profile": "xagent.im.v1", "title": "Legacy", "input_schema": {"type": "object"}}
    ],
    "security": {"trust_level": "local"}
  },
  "tool_options": {"sample_send": {"side_effect": true}},
  "capability": {"adapter_id": "sample", "adapter_version": "1.2.3", "supported_targets": ["sample"],
                 "supported_features": ["text"]}
})json";

const char* const build_json =
    R"({"version":"0.0.7","git_tag":"v0.0.7","git_rev":"abc1234","build_time":"2607241200"})";

plugin_manifest manifest_from(const json::object& m) {
  auto r = parse_manifest(json::serialize(m), build_json);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r ? *r : plugin_manifest{};
}

const plugin_manifest& sample() {
  static const plugin_manifest m = manifest_from(json::parse(manifest_json).as_object());
  return m;
}

channel make_channel(bool authenticated, json::object binding = {}) {
  channel c;
  c.id = "cch_0123456789abcdefABCDEF";
  c.plugin_id = "sample-1";
  c.owner = "conn_owner0123456789abcdef";
  c.authenticated = authenticated;
  c.persistent = authenticated;
  c.binding = std::move(binding);
  return c;
}

const std::vector<std::string> both_profiles{"xagent.im.v1", "xagent.im.v2"};
const std::vector<std::string> v2_only{"xagent.im.v2"};

// The tools entry with this id.
const json::object& tool_entry(const json::object& d, std::string_view id) {
  static const json::object none;
  for (const auto& t : d.at("tools").as_array())
    if (t.as_object().at("tool_id").as_string() == id) return t.as_object();
  ADD_FAILURE() << "no tool " << id << " in " << json::serialize(d);
  return none;
}

// Every descriptor the builder makes must pass our own check and the spec's JSON Schema.
void expect_valid(const json::object& d, const plugin_manifest& m, std::string_view channel_id) {
  EXPECT_EQ(descriptor_violation(d, m, channel_id), "") << json::serialize(d);
  EXPECT_EQ(test::schema_violations("xagent.connection.v2", json::serialize(d)), "") << json::serialize(d);
}

json::object build(const channel& c, const std::vector<std::string>& profiles, health_state h = health_state::healthy,
                   bool auth_running = false, const plugin_manifest& m = sample()) {
  auto d = build_descriptor({m, c, profiles, h, auth_running});
  expect_valid(d, m, c.id);
  return d;
}

// build_descriptor ---------------------------------------------------------------------------------------------

TEST(BuildDescriptor, CreatedChannel) {
  auto c = make_channel(false);
  auto d = build(c, v2_only);
  EXPECT_EQ(d.at("schema"), "xagent.connection/v2");
  const auto& conn = d.at("connection").as_object();
  EXPECT_EQ(conn.at("connector_card_id"), "im.sample_bot");
  EXPECT_EQ(conn.at("connector_id"), json::value(c.owner));
  EXPECT_EQ(conn.at("connector_channel_id"), json::value(c.id));
  EXPECT_EQ(conn.at("target_type"), "im");
  EXPECT_EQ(conn.at("profiles"), (json::array{"xagent.im.v2"}));
  EXPECT_EQ(conn.at("status"), "created");
  EXPECT_EQ(d.at("target"), (json::object{{"provider", "sample"}, {"label", "Sample"}, {"display_name", "Sample not bound"}}));
}

TEST(BuildDescriptor, ProfilesAreTheNegotiatedOnesInOrder) {
  auto d = build(make_channel(false), both_profiles);
  EXPECT_EQ(d.at("connection").at("profiles"), (json::array{"xagent.im.v1", "xagent.im.v2"}));
}

TEST(BuildDescriptor, AuthenticatingWhileARunRunsAndNotSignedIn) {
  auto d = build(make_channel(false), v2_only, health_state::healthy, true);
  EXPECT_EQ(d.at("connection").at("status"), "authenticating");
  // Health does not matter before sign-in.
  EXPECT_EQ(build(make_channel(false), v2_only, health_state::down, true).at("connection").at("status"),
            "authenticating");
  EXPECT_EQ(build(make_channel(false), v2_only, health_state::down, false).at("connection").at("status"), "created");
}

TEST(BuildDescriptor, ConnectedDegradedOffline) {
  auto c = make_channel(true, {{"display_name", "Alice"}});
  EXPECT_EQ(build(c, v2_only, health_state::healthy).at("connection").at("status"), "connected");
  EXPECT_EQ(build(c, v2_only, health_state::degraded).at("connection").at("status"), "degraded");
  EXPECT_EQ(build(c, v2_only, health_state::down).at("connection").at("status"), "offline");
  // A renewed login in progress does not hide that the channel is signed in.
  EXPECT_EQ(build(c, v2_only, health_state::healthy, true).at("connection").at("status"), "connected");
}

TEST(BuildDescriptor, DisplayNameAndAccountHintFromTheBinding) {
  auto d = build(make_channel(true, {{"display_name", "Alice (sample)"}, {"account_hint", "al***@x"}}), v2_only);
  EXPECT_EQ(d.at("target"), (json::object{{"provider", "sample"},
                                          {"label", "Sample"},
                                          {"display_name", "Alice (sample)"},
                                          {"account_hint", "al***@x"}}));
}

TEST(BuildDescriptor, SignedInWithoutDisplayNameShowsTheLabelAndNoHint) {
  auto d = build(make_channel(true), v2_only);
  const auto& t = d.at("target").as_object();
  EXPECT_EQ(t.at("display_name"), "Sample");
  EXPECT_FALSE(t.contains("account_hint"));
}

TEST(BuildDescriptor, AccountHintOnlyWhileSignedIn) {
  // A stale binding on a signed-out channel is never shown.
  auto d = build(make_channel(false, {{"display_name", "Alice"}, {"account_hint", "al***"}}), v2_only);
  const auto& t = d.at("target").as_object();
  EXPECT_EQ(t.at("display_name"), "Sample not bound");
  EXPECT_FALSE(t.contains("account_hint"));
}

TEST(BuildDescriptor, ToolsWhenNotAuthenticatedAreUnavailableUnknown) {
  auto d = build(make_channel(false), both_profiles);
  ASSERT_EQ(d.at("tools").as_array().size(), 3u);
  for (auto id : {"sample_send", "sample_status", "sample_legacy"}) {
    EXPECT_EQ(tool_entry(d, id).at("status"), "unavailable") << id;
    EXPECT_EQ(tool_entry(d, id).at("target_permission_state"), "unknown") << id;
  }
}

TEST(BuildDescriptor, ToolsWhenAuthenticatedAreAvailableGrantedByDefault) {
  auto d = build(make_channel(true), both_profiles);
  ASSERT_EQ(d.at("tools").as_array().size(), 3u);
  for (auto id : {"sample_send", "sample_status", "sample_legacy"}) {
    EXPECT_EQ(tool_entry(d, id), (json::object{{"tool_id", id}, {"status", "available"}, {"target_permission_state", "granted"}}));
  }
}

TEST(BuildDescriptor, BindingOverridesAToolsStatus) {
  json::object binding{
      {"tools", json::array{json::object{{"tool_id", "sample_send"}, {"status", "denied_by_target"},
                                         {"target_permission_state", "denied"}},
                            json::object{{"tool_id", "sample_status"}, {"status", "requires_reauth"}}}}};
  ASSERT_EQ(binding_violation(binding, sample()), "");
  auto d = build(make_channel(true, binding), both_profiles);
  EXPECT_EQ(tool_entry(d, "sample_send").at("status"), "denied_by_target");
  EXPECT_EQ(tool_entry(d, "sample_send").at("target_permission_state"), "denied");
  EXPECT_EQ(tool_entry(d, "sample_status").at("status"), "requires_reauth");
  EXPECT_EQ(tool_entry(d, "sample_status").at("target_permission_state"), "granted");  // not given: granted
  EXPECT_EQ(tool_entry(d, "sample_legacy").at("status"), "available");
}

TEST(BuildDescriptor, ToolOfANotNegotiatedProfileIsNotSupported) {
  json::object binding{
      {"tools", json::array{json::object{{"tool_id", "sample_legacy"}, {"status", "available"},
                                         {"target_permission_state", "granted"}}}}};
  auto d = build(make_channel(true, binding), v2_only);
  // The negotiated profiles win over the binding.
  EXPECT_EQ(tool_entry(d, "sample_legacy").at("status"), "not_supported");
  EXPECT_EQ(tool_entry(d, "sample_legacy").at("target_permission_state"), "unknown");
  EXPECT_EQ(tool_entry(d, "sample_send").at("status"), "available");
  // Not signed in: unavailable comes first.
  auto before = build(make_channel(false), v2_only);
  EXPECT_EQ(tool_entry(before, "sample_legacy").at("status"), "unavailable");
}

TEST(ToolStatus, MatchesTheDescriptor) {
  auto signed_in = make_channel(true, {{"tools", json::array{json::object{{"tool_id", "sample_status"},
                                                                          {"status", "denied_by_target"}}}}});
  auto signed_out = make_channel(false);
  descriptor_input in{sample(), signed_in, v2_only};
  EXPECT_EQ(tool_status(in, "sample_send"), "available");
  EXPECT_EQ(tool_status(in, "sample_status"), "denied_by_target");
  EXPECT_EQ(tool_status(in, "sample_legacy"), "not_supported");
  descriptor_input out{sample(), signed_out, v2_only};
  EXPECT_EQ(tool_status(out, "sample_send"), "unavailable");
}

TEST(BuildDescriptor, NoTargetsEntryFallsBackToPluginIdAndCardId) {
  auto m = json::parse(manifest_json).as_object();
  m["card"].as_object()["supports"].as_object().erase("targets");
  auto manifest = manifest_from(m);
  auto d = build(make_channel(false), v2_only, health_state::healthy, false, manifest);
  EXPECT_EQ(d.at("target").at("provider"), "sample-1");
  EXPECT_EQ(d.at("target").at("label"), "im.sample_bot");
  EXPECT_EQ(d.at("target").at("display_name"), "im.sample_bot not bound");
  EXPECT_EQ(d.at("connection").at("target_type"), "im");
}

// A card that serves only devices and names no supports.targets entry: its descriptors must say "device".
TEST(BuildDescriptor, NoTargetsEntryTakesTheCardsTargetType) {
  auto m = json::parse(manifest_json).as_object();
  auto& card = m["card"].as_object();
  card["supports"] = json::object{{"target_types", json::array{"device"}}, {"profiles", json::array{"xagent.device.v1"}}};
  card["tools"] = json::array{json::object{
      {"tool_id", "dev_ping"}, {"profile", "xagent.device.v1"}, {"title", "Ping"}, {"input_schema", {{"type", "object"}}}}};
  m["tool_options"] = json::object{};
  auto manifest = manifest_from(m);
  ASSERT_EQ(manifest.card_id, "im.sample_bot");
  std::vector<std::string> profiles{"xagent.device.v1"};
  auto d = build(make_channel(true), profiles, health_state::healthy, false, manifest);
  EXPECT_EQ(d.at("connection").at("target_type"), "device") << json::serialize(d);
}

TEST(BuildDescriptor, EveryStateCombinationIsValid) {
  std::vector<json::object> bindings{
      {},
      {{"display_name", "A"}},
      {{"display_name", std::string(256, 'x')}, {"account_hint", "h"}},
      {{"tools", json::array{json::object{{"tool_id", "sample_send"}, {"status", "not_supported"},
                                          {"target_permission_state", "requires_reauth"}}}}},
  };
  std::vector<std::vector<std::string>> profile_sets{v2_only, both_profiles, {"xagent.im.v1"}};
  int built = 0;
  for (bool authenticated : {false, true})
    for (const auto& b : bindings)
      for (const auto& p : profile_sets)
        for (auto h : {health_state::healthy, health_state::degraded, health_state::down})
          for (bool running : {false, true}) {
            auto c = make_channel(authenticated, b);
            auto d = build_descriptor({sample(), c, p, h, running});
            EXPECT_EQ(descriptor_violation(d, sample(), c.id), "") << json::serialize(d);
            ++built;
          }
  EXPECT_EQ(built, 2 * 4 * 3 * 3 * 2);
  // The schema check runs a process per document: a representative few.
  for (const auto& b : bindings) build(make_channel(true, b), both_profiles, health_state::down, true);
}

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
