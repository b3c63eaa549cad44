// build_descriptor and tool_status: what a channel's connection descriptor says, from the card, the channel, the
// negotiated profiles and the plugin's health; every descriptor built passes our check and the spec's schema.
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
using test::manifest_from;
using test::sample;
using test::v2_only;

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

// A card may leave "tools" out (the manifest checks accept it); its channels' descriptors list none. The builder read
// card.tools unchecked, and opening a channel of such a plugin aborted the server (std::out_of_range).
TEST(BuildDescriptor, ACardWithoutToolsListsNone) {
  auto m = sample();
  m.card.erase("tools");
  m.tools.clear();
  auto d = build(make_channel(true), v2_only, health_state::healthy, false, m);
  EXPECT_TRUE(d.at("tools").as_array().empty());
}

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

TEST(BuildDescriptor, TheWorseOfTheReportedStatusAndThePluginHealth) {
  auto c = make_channel(true, {{"display_name", "Alice"}});
  auto status = [&](std::string reported, health_state h) {
    c.target_status = std::move(reported);
    return build(c, v2_only, h).at("connection").at("status").as_string();
  };
  EXPECT_EQ(status("revoked", health_state::healthy), "revoked");
  EXPECT_EQ(status("revoked", health_state::down), "revoked");
  EXPECT_EQ(status("degraded", health_state::down), "offline");
  EXPECT_EQ(status("connected", health_state::degraded), "degraded");
  EXPECT_EQ(status("error", health_state::degraded), "error");
  EXPECT_EQ(status("", health_state::healthy), "connected");
  // A lost credential makes every tool ask for a new sign-in; an offline target makes them unavailable.
  c.target_status = "expired";
  auto d = build(c, v2_only);
  EXPECT_EQ(tool_entry(d, "sample_status").at("status"), "requires_reauth");
  EXPECT_EQ(tool_entry(d, "sample_status").at("target_permission_state"), "requires_reauth");
  c.target_status = "offline";
  EXPECT_EQ(tool_entry(build(c, v2_only), "sample_status").at("status"), "unavailable");
  EXPECT_EQ(descriptor_violation(build(c, v2_only), sample(), c.id), "");
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
  auto m = test::sample_with_im_v1();
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
  auto m = test::sample_with_im_v1();
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

}  // namespace
}  // namespace xconn
