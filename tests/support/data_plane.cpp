#include "support/data_plane.hpp"

#include "support/server_fixture.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <regex>
#include <set>

namespace xconn::test {
namespace json = boost::json;
using steady = std::chrono::steady_clock;

namespace {

std::chrono::milliseconds left_until(steady::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now());
  return left.count() > 0 ? left : std::chrono::milliseconds(0);
}

std::string str(const json::value* v) { return v && v->is_string() ? std::string(v->as_string()) : ""; }

}  // namespace

std::string text_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

std::string error_code(const json::object& packet) {
  auto* e = packet.if_contains("error");
  if (!e || !e->is_object()) return "";
  return str(e->as_object().if_contains("code"));
}

json::object payload_of(const json::object& packet) {
  auto* p = packet.if_contains("payload");
  return p && p->is_object() ? p->as_object() : json::object{};
}

json::object descriptor_in(const json::object& packet) {
  auto payload = payload_of(packet);
  auto* d = payload.if_contains("connection_descriptor");
  return d && d->is_object() ? d->as_object() : json::object{};
}

std::string last_pushed_status(dp_client& c, const std::string& channel, const std::string& want,
                               std::chrono::milliseconds deadline) {
  std::string pushed_status;
  auto until = std::chrono::steady_clock::now() + deadline;
  while (pushed_status != want) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    auto push = left.count() > 0 ? c.next_push("connection.descriptor.push", channel, left) : std::nullopt;
    if (!push) break;
    pushed_status = descriptor_in(*push)["connection"].as_object()["status"].as_string();
  }
  return pushed_status;
}

bool is_random_id(const std::string& text, const std::string& prefix) {
  if (!text.starts_with(prefix) || text.size() != prefix.size() + 22) return false;
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(prefix.size()), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

std::vector<std::string> card_tool_ids(const json::object& card) {
  std::vector<std::string> ids;
  if (auto* tools = card.if_contains("tools"); tools && tools->is_array())
    for (const auto& t : tools->as_array()) ids.push_back(str(t.as_object().if_contains("tool_id")));
  return ids;
}

std::unique_ptr<dp_client> dp_client::connect(unsigned short port, const std::string& key, const std::string& plugin,
                                              const json::object& hello_overrides) {
  std::unique_ptr<dp_client> c(new dp_client());
  auto card = http_get(port, "/connectors/" + plugin + "/connector-card.json").json();
  if (!card.is_object()) return nullptr;
  c->card_ = card.as_object();
  c->ws_ = ws_client::connect(port, "/connectors/" + plugin + "/ws", {key, "xagent.connector.packet.v1"});
  if (!c->ws_) return nullptr;
  json::object payload{{"connector_card_id", c->card_.at("connector_card_id")},
                       {"connector_id", ""},
                       {"protocol_version", "3.0"},
                       {"supported_profiles", json::array{"xagent.im.v1", "xagent.im.v2"}}};
  for (const auto& kv : hello_overrides) payload[kv.key()] = kv.value();
  if (auto* offered = payload.if_contains("supported_profiles"); offered && offered->is_array())
    for (const auto& p : offered->as_array())
      if (p.is_string()) c->profiles_.emplace_back(p.as_string());
  auto ack = c->request("connector.hello", std::move(payload));
  if (!ack || str(ack->if_contains("type")) != "connector.hello.ack") return nullptr;
  c->connector_id_ = str(payload_of(*ack).if_contains("connector_id"));
  return c;
}

dp_client::~dp_client() {
  // Every packet is an envelope of the spec; every descriptor, wherever it came, a descriptor of the spec.
  std::vector<std::string> descriptors;
  for (const auto& text : received_) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) continue;
    auto d = descriptor_in(v.as_object());
    if (!d.empty()) descriptors.push_back(json::serialize(d));
  }
  EXPECT_EQ(schema_violations("xagent.connector.packet.v1", received_), "");
  EXPECT_EQ(schema_violations("xagent.connection.v2", descriptors), "");
}

json::object dp_client::send(const std::string& type, json::object payload, const std::string& channel) {
  auto packet = make_packet(type, std::move(payload), channel);
  send_packet(packet);
  return packet;
}

void dp_client::send_packet(const json::object& packet) { ws_->send_json(packet); }

std::optional<json::object> dp_client::receive_one(steady::time_point until) {
  auto left = left_until(until);
  if (left.count() == 0) return std::nullopt;
  auto text = ws_->receive(left);
  if (!text) return std::nullopt;
  received_.push_back(*text);
  boost::system::error_code ec;
  auto v = json::parse(*text, ec);
  EXPECT_FALSE(ec) << "not JSON: " << *text;
  if (ec || !v.is_object()) return json::object{};
  return v.as_object();
}

std::optional<json::object> dp_client::answer(const json::object& request, std::chrono::milliseconds deadline) {
  auto request_id = request.at("request_id");
  auto matches = [&](const json::object& p) {
    auto* r = p.if_contains("request_id");
    return r && *r == request_id;
  };
  std::optional<json::object> found;
  auto it = std::find_if(kept_.begin(), kept_.end(), matches);
  if (it != kept_.end()) {
    found = *it;
    kept_.erase(it);
  } else {
    auto until = steady::now() + deadline;
    while (!found) {
      auto p = receive_one(until);
      if (!p) break;
      if (matches(*p))
        found = std::move(*p);
      else
        kept_.push_back(std::move(*p));
    }
  }
  EXPECT_TRUE(found) << "no answer to " << request.at("type") << " " << request_id;
  if (!found) return found;
  // Every answer echoes request_id and points reply_to at the request (docs/protocol.md, "Data plane").
  EXPECT_EQ(found->if_contains("reply_to") ? found->at("reply_to") : json::value(), request.at("packet_id"))
      << json::serialize(*found);
  EXPECT_TRUE(str(found->if_contains("packet_id")).starts_with("pkt_")) << json::serialize(*found);
  return found;
}

std::optional<json::object> dp_client::request(const std::string& type, json::object payload,
                                               const std::string& channel, std::chrono::milliseconds deadline) {
  auto packet = send(type, std::move(payload), channel);
  return answer(packet, deadline);
}

std::optional<json::object> dp_client::next_push(const std::string& type, const std::string& channel,
                                                 std::chrono::milliseconds deadline) {
  auto matches = [&](const json::object& p) {
    return str(p.if_contains("type")) == type &&
           (channel.empty() || str(p.if_contains("connector_channel_id")) == channel);
  };
  auto it = std::find_if(kept_.begin(), kept_.end(), matches);
  if (it != kept_.end()) {
    auto found = *it;
    kept_.erase(it);
    return found;
  }
  auto until = steady::now() + deadline;
  while (auto p = receive_one(until)) {
    if (matches(*p)) return p;
    kept_.push_back(std::move(*p));
  }
  return std::nullopt;
}

std::optional<json::object> dp_client::open_channel(const std::string& id, bool send_empty_id) {
  auto packet = make_packet("channel.open", {}, id);
  if (id.empty() && send_empty_id) packet["connector_channel_id"] = "";
  send_packet(packet);
  return answer(packet);
}

std::string dp_client::open(const std::string& id) {
  auto ack = open_channel(id);
  if (!ack || str(ack->if_contains("type")) != "channel.open.ack") return "";
  return str(ack->if_contains("connector_channel_id"));
}

std::optional<json::object> dp_client::auth_start(const std::string& channel, const std::string& flow_id,
                                                  std::optional<json::object> input) {
  json::object payload{{"flow_id", flow_id}};
  if (input) payload["input"] = std::move(*input);
  return request("auth.start", std::move(payload), channel);
}

std::optional<json::object> dp_client::authenticate(const std::string& channel, const std::string& token) {
  return auth_start(channel, "echo_token", json::object{{"token", token}});
}

std::string dp_client::open_authenticated(const std::string& token) {
  return open_signed_in("echo_token", json::object{{"token", token}});
}

std::string dp_client::open_signed_in(const std::string& flow_id, const boost::json::object& input) {
  auto id = open();
  if (id.empty()) return "";
  auto ack = auth_start(id, flow_id, input);
  if (!ack || str(payload_of(*ack).if_contains("status")) != "authenticated") {
    ADD_FAILURE() << flow_id << " did not authenticate: " << (ack ? json::serialize(*ack) : "no answer");
    return "";
  }
  return id;
}

std::optional<json::object> dp_client::invoke(const std::string& channel, const std::string& tool_id,
                                              json::object arguments, json::object context,
                                              std::chrono::milliseconds deadline) {
  return request("tool.invoke",
                 {{"tool_id", tool_id}, {"arguments", std::move(arguments)}, {"context", std::move(context)}},
                 channel, deadline);
}

std::optional<json::object> dp_client::get_descriptor(const std::string& channel) {
  return request("connection.descriptor.get", {}, channel);
}

expected_descriptor signed_out_descriptor(const std::string& channel_id, const std::string& connector_id,
                                          std::vector<std::string> profiles) {
  expected_descriptor e;
  e.channel_id = channel_id;
  e.connector_id = connector_id;
  e.status = "created";
  e.profiles = std::move(profiles);
  return e;
}

expected_descriptor signed_in_descriptor(const std::string& channel_id, const std::string& connector_id,
                                         std::vector<std::string> profiles, const std::string& account_hint) {
  auto e = signed_out_descriptor(channel_id, connector_id, std::move(profiles));
  e.status = "connected";
  e.authenticated = true;
  e.display_name = "Echo user";
  e.account_hint = account_hint;
  return e;
}

void expect_descriptor(const json::value& descriptor, const expected_descriptor& e, const json::object& card,
                       const std::string& where) {
  SCOPED_TRACE(where + ": " + json::serialize(descriptor));
  ASSERT_TRUE(descriptor.is_object());
  const auto& d = descriptor.as_object();
  EXPECT_EQ(str(d.if_contains("schema")), "xagent.connection/v2");
  ASSERT_TRUE(d.contains("connection") && d.at("connection").is_object());
  const auto& c = d.at("connection").as_object();
  EXPECT_EQ(str(c.if_contains("connector_card_id")), e.card_id);
  EXPECT_EQ(str(c.if_contains("connector_id")), e.connector_id);
  EXPECT_EQ(str(c.if_contains("connector_channel_id")), e.channel_id);
  EXPECT_EQ(str(c.if_contains("target_type")), e.target_type);
  EXPECT_EQ(str(c.if_contains("status")), e.status);
  std::set<std::string> profiles;
  if (auto* p = c.if_contains("profiles"); p && p->is_array())
    for (const auto& v : p->as_array()) profiles.insert(str(&v));
  EXPECT_EQ(profiles, std::set<std::string>(e.profiles.begin(), e.profiles.end()));

  ASSERT_TRUE(d.contains("target") && d.at("target").is_object());
  const auto& t = d.at("target").as_object();
  EXPECT_EQ(str(t.if_contains("provider")), e.provider);
  EXPECT_EQ(str(t.if_contains("label")), e.label);
  EXPECT_EQ(str(t.if_contains("display_name")), e.display_name);
  if (e.account_hint.empty())
    EXPECT_FALSE(t.contains("account_hint"));
  else if (e.account_hint == "echo-??????")
    EXPECT_TRUE(std::regex_match(str(t.if_contains("account_hint")), std::regex("echo-[0-9a-f]{6}")))
        << str(t.if_contains("account_hint"));
  else
    EXPECT_EQ(str(t.if_contains("account_hint")), e.account_hint);
  // Nothing but these four is ever in target.
  for (const auto& kv : t)
    EXPECT_TRUE(kv.key() == "provider" || kv.key() == "label" || kv.key() == "display_name" ||
                kv.key() == "account_hint")
        << kv.key();

  // Every card tool, once, and nothing else.
  ASSERT_TRUE(d.contains("tools") && d.at("tools").is_array());
  std::vector<std::string> seen;
  for (const auto& tool : d.at("tools").as_array()) {
    const auto& to = tool.as_object();
    std::string id = str(to.if_contains("tool_id"));
    seen.push_back(id);
    std::string profile;
    for (const auto& ct : card.at("tools").as_array())
      if (str(ct.as_object().if_contains("tool_id")) == id) profile = str(ct.as_object().if_contains("profile"));
    bool negotiated = std::find(e.profiles.begin(), e.profiles.end(), profile) != e.profiles.end();
    if (!e.authenticated) {
      EXPECT_EQ(str(to.if_contains("status")), "unavailable") << id;
      EXPECT_EQ(str(to.if_contains("target_permission_state")), "unknown") << id;
    } else if (!negotiated) {
      EXPECT_EQ(str(to.if_contains("status")), "not_supported") << id;
    } else {
      EXPECT_EQ(str(to.if_contains("status")), "available") << id;
      EXPECT_EQ(str(to.if_contains("target_permission_state")), "granted") << id;
    }
  }
  auto expected = card_tool_ids(card);
  std::sort(seen.begin(), seen.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seen, expected);
}

}  // namespace xconn::test
