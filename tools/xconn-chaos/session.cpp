#include "session.hpp"

namespace xconn::chaos {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

session::session(unsigned short port, std::string key, journal& j, int epoch)
    : port_(port), key_(std::move(key)), journal_(j), epoch_(epoch) {}

bool session::start(const std::string& connector_id, const std::vector<std::string>& channels) {
  ws_ = ws_socket::connect(port_, "echo", key_);
  if (!ws_) return false;
  if (on_step) on_step("connected");
  json::object hello{{"connector_card_id", "im.echo"},
                     {"connector_id", connector_id},
                     {"protocol_version", "3.0"},
                     {"supported_profiles", json::array{"xagent.im.v2"}}};
  auto ack = call("connector.hello", std::move(hello), "");
  if (!ack) return false;
  connector_id_ = text_at(payload_of(*ack), "connector_id");
  if (connector_id_.empty()) return false;
  if (on_step) on_step("hello");
  for (const auto& c : channels) {
    auto opened = call("channel.open", json::object{}, c);
    if (!opened || text_at(*opened, "type") != "channel.open.ack" ||
        text_at(payload_of(*opened), "connector_channel_id") != c)
      return false;
  }
  if (on_step) on_step("channels");
  return true;
}

std::string session::new_signed_in_channel() {
  auto opened = call("channel.open", json::object{}, "");
  if (!opened) return "";
  std::string id = text_at(payload_of(*opened), "connector_channel_id");
  if (id.empty()) return "";
  auto signed_in = call("auth.start", json::object{{"flow_id", "echo_token"}, {"input", json::object{{"token", "chaos"}}}},
                        id);
  if (!signed_in || text_at(payload_of(*signed_in), "status") != "authenticated") return "";
  return id;
}

// A request answered before anything else is handled (only at the start, when nothing else is in flight but
// pushes, which are handled as they come).
std::optional<json::object> session::call(const std::string& type, json::object payload, const std::string& channel) {
  std::string request_id;
  if (!ws_->send(make_packet(type, std::move(payload), channel, &request_id))) return std::nullopt;
  auto until = steady::now() + 10s;
  while (steady::now() < until) {
    auto p = ws_->receive(std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now()));
    if (!p) {
      if (ws_->closed()) return std::nullopt;
      continue;
    }
    if (text_at(*p, "request_id") == request_id) return p;
    handle(*p);
  }
  return std::nullopt;
}

void session::send_final(const std::string& channel, const std::string& message_id, bool fresh) {
  std::string request_id;
  auto p = make_packet("chat.message", json::object{{"message_id", message_id}, {"text", "final " + message_id}},
                       channel, &request_id);
  journal_.add("final_sent", epoch_, {message_id, channel});
  requests_[request_id] = {"final", message_id, fresh, ack_seq_};
  ws_->send(p);
}

void session::send_tool(const std::string& channel, const std::string& key, bool fresh) {
  std::string request_id;
  auto p = make_packet("tool.invoke",
                       json::object{{"tool_id", "echo_send_message"},
                                    {"arguments", json::object{{"text", "tool " + key}}},
                                    {"idempotency_key", key}},
                       channel, &request_id);
  journal_.add("tool_sent", epoch_, {key, channel});
  requests_[request_id] = {"tool", key, fresh, ack_seq_};
  ws_->send(p);
}

void session::ack(const std::string& channel, const std::string& message_id) {
  if (!alive()) return;
  // Journaled before it is written: a frame cut short by the kill only makes this ack one that was never
  // confirmed, which promises nothing.
  journal_.add("ack", epoch_, {std::to_string(ack_seq_ + 1), message_id});
  ++ack_seq_;
  ws_->send(make_packet("chat.message.ack", json::object{{"message_id", message_id}, {"status", "accepted"}}, channel));
}

void session::confirm(long long upto) {
  if (upto <= confirmed_) return;
  confirmed_ = upto;
  journal_.add("confirm", epoch_, {std::to_string(upto)});
}

bool session::pump(std::chrono::milliseconds wait) {
  if (!alive()) return false;
  auto until = steady::now() + wait;
  do {
    auto p = ws_->receive(std::max(std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now()), 1ms));
    if (!p) break;
    handle(*p);
  } while (steady::now() < until);
  return alive();
}

bool session::settle(std::chrono::milliseconds deadline) {
  auto until = steady::now() + deadline;
  while (!requests_.empty() && alive() && steady::now() < until) pump(50ms);
  return requests_.empty();
}

void session::handle(const json::object& packet) {
  const std::string type = text_at(packet, "type");
  const auto& payload = payload_of(packet);
  if (type == "chat.message") {  // an inbound message pushed
    delivery d{text_at(packet, "connector_channel_id"), text_at(payload, "message_id")};
    std::string files;
    if (auto* f = payload.if_contains("files"); f && f->is_array()) {
      for (const auto& item : f->get_array()) {
        if (!item.is_object()) continue;
        auto* exp = item.get_object().if_contains("expires_at");
        if (!files.empty()) files += ',';
        files += text_at(item.get_object(), "file_ref") + "=" + (exp ? json::serialize(*exp) : std::string("?"));
      }
    }
    auto* created = payload.if_contains("created_at");
    journal_.add("deliver", epoch_,
                 {d.message_id, created ? json::serialize(*created) : std::string("?"), files.empty() ? "-" : files});
    if (on_delivery) on_delivery(d);
    return;
  }
  auto it = requests_.find(text_at(packet, "request_id"));
  if (it == requests_.end()) return;  // pushes (descriptors, progress) and answers of calls
  request r = std::move(it->second);
  requests_.erase(it);
  if (r.kind == "final") {
    std::string status = type == "chat.message.ack" ? text_at(payload, "status") : "error:" + type;
    if (status == "rejected") status += ":" + text_at(payload, "code");
    journal_.add("final_ack", epoch_, {r.id, status});
    if (r.fresh && status == "accepted") confirm(r.acks_before);
    if (on_final_answer) on_final_answer(r.id, status);
  } else if (r.kind == "tool") {
    auto* result = payload.if_contains("result");
    if (type == "tool.invoke.ack" && result && result->is_object()) {
      std::string mid = text_at(result->get_object(), "message_id");
      journal_.add("tool_result", epoch_, {r.id, mid});
      if (r.fresh) confirm(r.acks_before);
      if (on_tool_answer) on_tool_answer(r.id, mid);
    } else {
      std::string code;
      if (auto* e = packet.if_contains("error"); e && e->is_object()) code = text_at(e->get_object(), "code");
      journal_.add("tool_error", epoch_, {r.id, code.empty() ? type : code});
    }
  }
}

}  // namespace xconn::chaos
