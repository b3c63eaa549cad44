#include "support/xagent_session.hpp"

#include "support/server_fixture.hpp"

#include <gtest/gtest.h>

namespace xconn::test {
namespace json = boost::json;

xagent_session::xagent_session(unsigned short port, const std::string& key, const std::string& plugin,
                               const std::string& card_id, const std::string& connector_id, json::array profiles) {
  ws_ = ws_client::connect(port, "/connectors/" + plugin + "/ws", {key});
  if (!ws_) {
    ADD_FAILURE() << "cannot connect to " << plugin;
    return;
  }
  json::object overrides{{"connector_card_id", card_id}, {"supported_profiles", std::move(profiles)}};
  if (!connector_id.empty()) overrides["connector_id"] = connector_id;
  auto ack = ws_->hello(overrides);
  if (!ack || ack->at("type") != "connector.hello.ack") {
    ADD_FAILURE() << "hello failed: " << (ack ? json::serialize(*ack) : "no answer");
    return;
  }
  connector_id_ = std::string(ack->at("payload").at("connector_id").as_string());
}

xagent_session::~xagent_session() { EXPECT_EQ(violations(), "") << "a packet broke the spec's packet schema"; }

std::optional<json::object> xagent_session::receive(std::chrono::milliseconds deadline) {
  auto text = ws_->receive(deadline);
  if (!text) return std::nullopt;
  transcript_ += *text;
  transcript_ += '\n';
  unchecked_.push_back(*text);
  return json::parse(*text).as_object();
}

json::object xagent_session::request(const json::object& packet, std::chrono::milliseconds deadline) {
  ws_->send_json(packet);
  auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto reply = receive(left);
    if (!reply) break;
    auto* to = reply->if_contains("reply_to");
    if (to && *to == packet.at("packet_id")) {
      EXPECT_EQ(reply->at("request_id"), packet.at("request_id"));
      return *reply;
    }
    pushes_.push_back(std::move(*reply));
  }
  ADD_FAILURE() << "no answer to " << json::serialize(packet);
  return {};
}

json::object xagent_session::call(const std::string& type, const std::string& channel, json::object payload) {
  return request(make_packet(type, std::move(payload), channel));
}

json::object xagent_session::open(const std::string& requested) { return call("channel.open", requested); }

json::object xagent_session::sign_in(const std::string& channel, const std::string& token) {
  return call("auth.start", channel, {{"flow_id", "echo_token"}, {"input", {{"token", token}}}});
}

json::object xagent_session::invoke(const std::string& channel, const std::string& tool, json::object arguments,
                                    json::object context) {
  return call("tool.invoke", channel, {{"tool_id", tool}, {"arguments", std::move(arguments)}, {"context", std::move(context)}});
}

std::string xagent_session::violations() {
  return schema_violations("xagent.connector.packet.v1", std::exchange(unchecked_, {}));
}

std::vector<json::object> xagent_session::take_pushes() { return std::exchange(pushes_, {}); }

std::optional<json::object> xagent_session::wait_push(const std::string& type, std::chrono::milliseconds deadline) {
  for (auto it = pushes_.begin(); it != pushes_.end(); ++it)
    if (it->at("type").as_string() == type) {
      auto out = *it;
      pushes_.erase(it);
      return out;
    }
  auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto p = receive(left);
    if (!p) return std::nullopt;
    if (p->at("type").as_string() == type) return p;
    pushes_.push_back(std::move(*p));
  }
}

std::string error_code_of(const json::object& packet) {
  auto* e = packet.if_contains("error");
  return e && e->is_object() ? std::string(e->as_object().at("code").as_string()) : "";
}

const json::object& descriptor_of(const json::object& packet) {
  return packet.at("payload").at("connection_descriptor").as_object();
}

std::string status_of_descriptor(const json::object& packet) {
  return std::string(descriptor_of(packet).at("connection").at("status").as_string());
}

}  // namespace xconn::test
