// The example adapter (docs/plugin-api.md "Writing a network adapter"): a line-based TCP chat server as a target,
// written on the adapter layer. Copy this folder to start an adapter of your own.
//
// The chat protocol, one line each way, "\n"-terminated:
//   client: HELLO <user> <password>   server: OK <room> <newest seq>  |  ERR denied (wrong user or password)
//   client: SINCE <seq>               server: every kept room message after seq, then each new one as it comes
//   server: MSG <seq> <from> <text>   a room message; seq grows by one per message
//   client: SEND <text>               server: SENT <seq>  |  ERR <code>   (answered in order)
//
// What it shows: a sign-in whose answer binds the channel; one connection per (server, user, password) held by every
// channel bound on it (shared_consumers); each room message emitted once per channel, with the channel's cursor
// committed in the same transaction (emit_with), so a restart asks only for what came after; outbound finals; a
// restore that verifies before connected (channel_checks); an outage: degraded, retried with backoff, connected.
#include "chat_connection.hpp"
#include "example_manifest.hpp"
#include "kit/consumer_key.hpp"
#include "kit/json_fields.hpp"

#include <xconn/adapter/answers.hpp>
#include <xconn/adapter/channel_checks.hpp>
#include <xconn/adapter/config_table.hpp>
#include <xconn/adapter/health_board.hpp>
#include <xconn/adapter/network_adapter.hpp>
#include <xconn/adapter/shared_consumers.hpp>

#include <boost/json/src.hpp>  // Boost.JSON's implementation, once per plugin

#include <map>

namespace example {
namespace json = boost::json;
namespace adapter = xconn::adapter;
using xconn::sdk::kv_batch;

// Who signs in where; the password comes from the host (a secret field), never from the plugin's own store.
struct login {
  std::string server, user, password;  // server: host:port
  std::string host() const { return server.substr(0, server.rfind(':')); }
  std::string port() const { return server.substr(server.rfind(':') + 1); }
};

using xconn::kit::string_at;
json::object parse_object(std::string_view text) { return xconn::kit::parse_object(text).value_or(json::object{}); }

// The plugin's settings (connectors.example in the config file), each checked by one row of the table.
struct settings {
  std::int64_t sign_in_timeout_s = 10;
};
inline const xconn::adapter::config_table<settings> settings_table{
    {"config.sign_in_timeout_s", xconn::adapter::config_rule::integer(1, 60), &settings::sign_in_timeout_s},
};

class example_plugin final : public adapter::network_adapter {
 public:
  static std::string manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }
  static std::string validate_config(std::string_view section) { return settings_table.check_text(section, nullptr); }
  static constexpr bool verifies_restored_channels = true;

  example_plugin(xconn::sdk::host host, std::string_view section)
      : network_adapter(host, "example"), health_(host), connections_(host) {
    settings_table.check_text(section, &settings_);  // validate_config has passed it
  }
  ~example_plugin() override { halt(); }

  void auth_start(std::string_view channel, std::string_view flow_id, std::string_view, std::string_view input_json,
                  completion done) override {
    auto input = parse_object(input_json);
    login l{string_at(input, "server"), string_at(input, "user"), string_at(input, "password")};
    if (flow_id != "chat_login") return done.fail(adapter::no_such_auth_flow());
    // Each goes into one protocol line: a line break would start another.
    if (l.server.find(':') == std::string::npos || l.user.empty() || l.user.find_first_of(" \r\n") != std::string::npos ||
        l.password.find_first_of("\r\n") != std::string::npos)
      return done.fail(adapter::invalid_input("server: host:port; user: one word; password: one line"));
    spawn(sign_in(std::string(channel), std::move(l), std::move(done)));
  }

  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override {
    spawn(restore(std::string(channel), string_at(parse_object(credentials_json), "password"), std::move(done)));
  }

  void send(std::string_view channel, std::string_view reply_json, completion done) override {
    spawn(deliver(std::string(channel), string_at(parse_object(reply_json), "text"), std::move(done)));
  }

  void auth_logout(std::string_view channel, completion done) override {
    spawn(forget(std::string(channel)));
    done.ok();
  }
  void channel_end(std::string_view channel, std::string_view reason, completion done) override {
    if (reason != "closed") spawn(forget(std::string(channel)));  // closed: the channel stays signed in
    done.ok();
  }
  void consumer_stop(std::string_view key, completion done) override {
    spawn(close(std::string(key)));
    done.ok();
  }

 private:
  struct channel_state {
    login who;
    std::string key;  // its connection's
    long cursor = 0;  // the last room message emitted to it
  };

  // The channel's connection, made and started when it is the first of its key.
  std::shared_ptr<chat_connection> open(const std::string& key, const login& l) {
    auto got = connections_.open(key, [&] { return make_connection(key, l); });
    if (got.created) spawn(keep_running(got.consumer));
    return got.consumer;
  }
  std::shared_ptr<chat_connection> make_connection(const std::string& key, const login& l) {
    chat_connection::events on;
    on.since = [this, key](long newest) {  // the oldest cursor of the channels on this connection
      for (const auto& [channel, c] : channels_)
        if (c.key == key) newest = std::min(newest, c.cursor);
      return newest;
    };
    on.message = [this, key](long seq, std::string from, std::string text) { return inbound(key, seq, from, text); };
    on.changed = [this, key](chat_connection::state s) { changed(key, s); };
    return std::make_shared<chat_connection>(io(), l.host(), l.port(), l.user, l.password,
                                             std::chrono::seconds(settings_.sign_in_timeout_s), std::move(on));
  }
  awaitable<void> keep_running(std::shared_ptr<chat_connection> c) { co_await c->run(); }
  std::string key_of(const login& l) {
    return xconn::kit::consumer_key(host(), "chat-", l.server + "\n" + l.user + "\n" + l.password);
  }

  awaitable<void> sign_in(std::string channel, login l, completion done) {
    auto key = key_of(l);
    auto connection = open(key, l);
    auto verdict = co_await connection->outcome();
    if (verdict != adapter::check_verdict::accepted) {
      if (auto unused = connections_.discard_if_unused(key)) unused->stop();
      if (verdict == adapter::check_verdict::refused)
        co_return done.fail(adapter::auth_refused("invalid_credentials", "the chat server refused the user or password"));
      co_return done.fail(adapter::target_unreachable("the chat server did not answer"));
    }
    long cursor = connection->newest();  // a new channel starts with what comes next
    json::object kept{{"server", l.server}, {"user", l.user}};
    auto written = co_await kv_write(
        kv_batch().put("chan/" + channel, json::serialize(kept)).put("cursor/" + channel, std::to_string(cursor)));
    if (!written.ok) co_return done.fail(adapter::binding_not_kept());
    checks_.forget(channel);
    channels_[channel] = {l, key, cursor};
    bind(channel);
    done.ok(adapter::auth_authenticated({connection->room() + " on " + l.server, l.user}));
  }

  // The channel as kept, checked with the server before it shows connected (channel_checks).
  awaitable<void> restore(std::string channel, std::string password, completion done) {
    auto kept = parse_object(kv_get("chan/" + channel).value_or(""));
    login l{string_at(kept, "server"), string_at(kept, "user"), std::move(password)};
    if (l.server.empty() || l.password.empty()) co_return done.ok(adapter::report_expired());
    channels_[channel] = {l, key_of(l), std::stol(kv_get("cursor/" + channel).value_or("0"))};
    done.ok(co_await checks_.restore(channel));
  }
  awaitable<adapter::check_verdict> verify(std::string channel) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) co_return adapter::check_verdict::expired;
    auto key = it->second.key;
    auto verdict = co_await open(key, it->second.who)->outcome();
    if (verdict == adapter::check_verdict::refused) {
      channels_.erase(channel);
      if (auto unused = connections_.discard_if_unused(key)) unused->stop();
    }
    co_return verdict;
  }
  void bind(const std::string& channel) {
    auto& c = channels_.at(channel);
    auto got = connections_.acquire(c.key, channel, [&] { return make_connection(c.key, c.who); });
    if (got.created) spawn(keep_running(got.consumer));
  }

  // One room message, to every channel on the connection that has not had it, each with its cursor.
  awaitable<void> inbound(std::string key, long seq, std::string from, std::string text) {
    std::vector<std::string> due;
    for (const auto& [channel, c] : channels_)
      if (c.key == key && c.cursor < seq) due.push_back(channel);
    json::object message{{"text", text}, {"sender_id", from}, {"sender_name", from}, {"msg_id", std::to_string(seq)}};
    for (const auto& channel : due) {
      auto r = co_await emit_with(channel, json::serialize(message),
                                  kv_batch().put("cursor/" + channel, std::to_string(seq)));
      if (!r.ok) host().warn("example: a room message was refused: " + r.failure.code);
      if (auto it = channels_.find(channel); it != channels_.end()) it->second.cursor = seq;
    }
  }

  // The connection's state, shown on its channels and the health board.
  void changed(const std::string& key, chat_connection::state s) {
    using state = chat_connection::state;
    if (s == state::up || s == state::away) {
      health_.set(key, s == state::up ? "" : "target_unreachable");
      for (const auto& channel : connections_.channels_of(key))
        set_channel_status(channel, s == state::up ? "connected" : "degraded", s == state::up ? "" : "target_unreachable");
    } else if (s == state::refused) {  // the password was changed on the server meanwhile
      health_.set(key, "");
      std::vector<std::string> unbound;
      connections_.take(key, &unbound);
      for (const auto& channel : unbound) {
        channels_.erase(channel);
        set_channel_status(channel, "revoked");
      }
    }
  }

  awaitable<void> deliver(std::string channel, std::string text, completion done) {
    if (!channels_.contains(channel)) co_return done.ok(adapter::send_not_signed_in());
    auto connection = connections_.of(channel);
    std::replace_if(text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');  // one line
    std::optional<long> seq;
    if (connection) seq = co_await connection->send(text);
    done.ok(seq ? adapter::send_delivered(std::to_string(*seq)) : adapter::send_target_unreachable());
  }

  awaitable<void> forget(std::string channel) {
    checks_.forget(channel);
    channels_.erase(channel);
    if (auto last = connections_.release(channel)) last->stop();
    co_await kv_write(kv_batch().erase("chan/" + channel).erase("cursor/" + channel));
  }
  awaitable<void> close(std::string key) {
    if (auto connection = connections_.take(key)) connection->stop();
    co_return;
  }
  void on_halted() override {
    for (auto& connection : connections_.take_all()) connection->stop();
  }

  settings settings_;
  adapter::health_board health_;
  adapter::shared_consumers<chat_connection> connections_;
  adapter::channel_checks checks_{*this, health_, [this](const std::string& c) { return verify(c); },
                                  [this](const std::string& c) { bind(c); }};
  std::map<std::string, channel_state> channels_;  // signed-in channels; on the loop only
};

}  // namespace example

XCONN_PLUGIN(example::example_plugin)
