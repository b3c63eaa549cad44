// The irc plugin (docs/adapters.md "irc"): a channel is an IRC channel or a nick reached through one connection per
// (server, nick, password), a shared consumer held by every channel bound through it. All IRC work runs on the
// adapter's event loop (one thread); the host's calls hand their work to it and never wait for it there.
#include "irc_config.hpp"
#include "irc_input.hpp"
#include "irc_manifest.hpp"
#include "irc_messages.hpp"
#include "irc_replies.hpp"
#include "irc_session.hpp"
#include "irc_text.hpp"
#include "kit/consumer_key.hpp"
#include "kit/json_fields.hpp"

#include <xconn/adapter/answers.hpp>
#include <xconn/adapter/channel_checks.hpp>
#include <xconn/adapter/graceful_close.hpp>
#include <xconn/adapter/health_board.hpp>
#include <xconn/adapter/network_adapter.hpp>
#include <xconn/adapter/shared_consumers.hpp>
#include <xconn/adapter/tls_client.hpp>
#include <xconn/adapter/unrepeatable_emits.hpp>

#include <boost/json.hpp>
// Boost.JSON compiled into this library (header-only mode, hidden); exactly one translation unit includes it.
#include <boost/json/src.hpp>

#include <map>
#include <memory>
#include <string>

namespace irc {
namespace {
constexpr auto quit_grace = std::chrono::seconds(1);  // how long a stop waits for the QUIT lines to go out

namespace json = boost::json;
namespace ad = xconn::adapter;
using xconn::kit::parse_object;
using xconn::kit::string_at;
using xconn::sdk::completion;
using xconn::sdk::kv_batch;
using namespace std::chrono_literals;

// What identifies a connection. It holds the password: only ever turned into a key, never kept or logged.
std::string session_material(const login& l) {
  return l.host + "\n" + l.port + "\n" + (l.tls ? "tls" : "plain") + "\n" + l.nick + "\n" + l.password;
}

class irc_plugin final : public ad::network_adapter {
 public:
  static std::string manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }
  static std::string validate_config(std::string_view section_json) {
    return config_rows.check_text(section_json, nullptr);
  }
  static constexpr bool verifies_restored_channels = true;

  irc_plugin(xconn::sdk::host host, std::string_view section_json) : network_adapter(host, "irc") {
    config_rows.check_text(section_json, &settings_);  // validate_config has passed it
    if (auto refused = xconn::adapter::trust_for_clients(tls_, settings_.ca_file); !refused.empty())
      host.warn("irc: " + refused + "; only the system store is trusted");
  }
  ~irc_plugin() override { halt(); }

  void auth_start(std::string_view channel, std::string_view flow_id, std::string_view, std::string_view input_json,
                  completion done) override {
    if (flow_id != "irc_login") return done.fail(ad::no_such_auth_flow());
    login l;
    auto refused = read_login(parse_object(input_json).value_or(json::object{}), l);
    if (!refused.empty()) return done.fail(ad::invalid_input(refused));
    spawn(sign_in(std::string(channel), std::move(l), std::move(done)));
  }

  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override {
    auto kept = kv_get("bind/" + std::string(channel));
    auto fields = parse_object(kept.value_or("")).value_or(json::object{});
    auto credentials = parse_object(credentials_json).value_or(json::object{});
    if (auto* password = credentials.if_contains("password")) fields["password"] = *password;
    login l;
    if (!kept || !read_login(fields, l).empty()) return done.ok(ad::report_expired());
    spawn(restore(std::string(channel), std::move(l), std::move(done)));
  }

  void auth_logout(std::string_view channel, completion done) override {
    spawn(forget(std::string(channel)));
    done.ok();
  }
  void channel_end(std::string_view channel, std::string_view reason, completion done) override {
    if (reason != "closed") spawn(forget(std::string(channel)));
    done.ok();
  }
  void consumer_stop(std::string_view key, completion done) override {
    spawn(drop_session(std::string(key), {}));
    done.ok();
  }

  void send(std::string_view channel, std::string_view reply_json, completion done) override {
    auto bodies = reply_bodies(parse_object(reply_json).value_or(json::object{}));  // files announced as links
    spawn(send_lines(std::string(channel), std::move(bodies), std::move(done)));
  }

  void invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view, completion done) override {
    auto args = parse_object(arguments_json).value_or(json::object{});
    if (tool_id == "irc_message_send") {
      auto* text = args.if_contains("text");
      if (!text || !text->is_string() || text->as_string().empty())
        return done.fail({"invalid_arguments", "text: required, a non-empty string", false});
      return spawn(message_tool(std::string(channel), split_message(text->as_string()), std::move(done)));
    }
    if (tool_id == "irc_channel_names") return spawn(names_tool(std::string(channel), std::move(done)));
    done.fail(ad::no_such_tool());
  }

 private:
  struct binding {
    std::string target;  // "#ops" or a nick
    std::string shown = "connected";  // what the host was last told: "connected" or "degraded" (the server away)
    bool nick_held = false;           // the last check found the nick in use (a ghost of ours, most likely)
  };

  // At stop each connection says QUIT; the stop waits for them to go out, at most quit_grace.
  void on_halting() override { ad::close_gracefully(io(), sessions_, quit_grace); }
  void on_halted() override {
    for (auto& s : sessions_.take_all()) s->abandon();
  }

  clock::time_point registration_deadline() const { return clock::now() + 1s * settings_.connect_timeout_s; }
  // The shared consumer of a connection: the host's HMAC of what identifies it (kit/consumer_key.hpp).
  std::string session_key(const login& l) const { return xconn::kit::consumer_key(host(), "irc-", session_material(l)); }

  // A new connection for login, not yet running; what it hears goes to this plugin under key.
  std::shared_ptr<session> make_session(const std::string& key, const login& l) {
    session_options options{l.host, l.port, l.tls, l.nick, l.password,
                            std::chrono::seconds(settings_.connect_timeout_s), settings_.lines_per_second};
    session_events events{[this, key](const line& message) { inbound(key, message); },
                          [this, key](bool up) { state_changed(key, up); },
                          [this, key](const std::string&) { spawn(drop_session(key, "revoked")); },
                          [this](const std::string& name) { host().count(name); }};
    return std::make_shared<session>(io(), tls_, std::move(options), std::move(events));
  }

  // The session of a login: the one already open for its (server, nick, password), else a new one, connecting.
  std::shared_ptr<session> session_for(const login& l) {
    auto key = session_key(l);
    auto got = sessions_.open(key, [&] { return make_session(key, l); });
    if (got.created) got.consumer->run();
    return got.consumer;
  }
  // A session a sign-in opened and nobody came to hold: closed.
  void discard_if_unused(const login& l) {
    if (auto s = sessions_.discard_if_unused(session_key(l))) s->close();
  }

  awaitable<void> sign_in(std::string channel, login l, completion done) {
    auto s = session_for(l);
    auto outcome = co_await s->ready(registration_deadline());
    if (outcome.empty() && is_channel(l.target)) outcome = co_await s->join(l.target, clock::now() + 10s);
    if (!outcome.empty()) {
      discard_if_unused(l);
      co_return done.fail(ad::auth_refused(outcome, refusal_message(outcome), outcome == "target_unreachable"));
    }
    json::object kept{{"server", l.server()}, {"nick", l.nick}, {"target", l.target}, {"tls", l.tls ? "true" : "false"}};
    if (!(co_await kv_write(kv_batch().put("bind/" + channel, json::serialize(kept)))).ok) {
      discard_if_unused(l);
      co_return done.fail(ad::binding_not_kept());
    }
    checks_.forget(channel);
    bind(channel, l);
    done.ok(ad::auth_authenticated({l.target + " on " + l.host, l.nick}));
  }

  // A restored channel holds its connection again at once (it keeps trying while the server is away); the checks
  // show it connected once the server took the nick and the channel was joined (verify). While a ghost holds the
  // nick the reason says so (nick_in_use) instead of target_unreachable.
  awaitable<void> restore(std::string channel, login l, completion done) {
    bind(channel, l);
    // A channel signed in before the keys were HMACs still holds the bare hash: let go of it (docs/irc.md).
    if (auto legacy = xconn::kit::legacy_consumer_key("irc-", session_material(l)); legacy != session_key(l))
      host().release_consumer(channel, legacy);
    auto report = co_await checks_.restore(channel);
    auto b = channels_.find(channel);
    done.ok(checks_.awaiting(channel) && b != channels_.end() && b->second.nick_held ? ad::report_degraded("nick_in_use")
                                                                                  : report);
  }

  // Only the server's own refusal of the password, the nick or the channel is a verdict on the credential; anything
  // else (no answer, a ghost holding the nick) leaves the channel degraded and checked again.
  awaitable<ad::check_verdict> verify(std::string channel) {
    auto s = sessions_.of(channel);
    auto it = channels_.find(channel);
    if (!s || it == channels_.end()) co_return ad::check_verdict::refused;  // refused meanwhile
    auto target = it->second.target;
    auto outcome = co_await s->ready(registration_deadline());
    // While the server is away the channel is still wanted: join() keeps it, so the reconnect joins it.
    if (is_channel(target) && (outcome.empty() || outcome == "target_unreachable")) {
      auto joined = co_await s->join(target, clock::now() + 10s);
      if (outcome.empty()) outcome = joined;
    }
    if (outcome == "invalid_credentials" || outcome == "invalid_input" || outcome == "join_refused") {
      unbind(channel);
      co_return ad::check_verdict::refused;
    }
    if (auto b = channels_.find(channel); b != channels_.end()) b->second.nick_held = outcome == "nick_in_use";
    co_return outcome.empty() || s->registered() ? ad::check_verdict::accepted : ad::check_verdict::unreachable;
  }

  void bind(const std::string& channel, const login& l) {
    auto key = session_key(l);
    if (sessions_.key_of(channel).value_or(key) != key) part_unless_shared(channel);
    auto got = sessions_.acquire(key, channel, [&] { return make_session(key, l); });
    if (got.created) got.consumer->run();
    if (got.released) got.released->close();
    if (got.refused_by_host) host().warn("irc: a consumer was refused");
    channels_[channel] = {l.target};
    note_health(key);
  }

  // Leaves the channel's IRC channel when no other binding of that connection is in it.
  void part_unless_shared(const std::string& channel) {
    auto it = channels_.find(channel);
    auto key = sessions_.key_of(channel);
    if (it == channels_.end() || !key || !is_channel(it->second.target)) return;
    for (const auto& other : sessions_.channels_of(*key))
      if (auto o = channels_.find(other); other != channel && o != channels_.end() &&
                                          fold(o->second.target) == fold(it->second.target))
        return;
    if (auto s = sessions_.find(*key)) s->part(it->second.target);
  }

  // The channel lets go of its connection (closed when it was the last holder).
  void unbind(const std::string& channel) {
    auto key = sessions_.key_of(channel);
    part_unless_shared(channel);
    channels_.erase(channel);
    if (auto last = sessions_.release(channel)) last->close();
    if (key) note_health(*key);
  }

  awaitable<void> forget(std::string channel) {
    unbind(channel);
    checks_.forget(channel);
    host().kv_write(kv_batch().erase("bind/" + channel));
    co_return;
  }

  // The host let go of a connection (consumer_stop), or its server refused the password or the nick on a reconnect
  // (status "revoked": the channels bound through it are revoked).
  awaitable<void> drop_session(std::string key, std::string status) {
    std::vector<std::string> unbound;
    if (auto s = sessions_.take(key, &unbound)) s->close();
    for (const auto& channel : unbound) {
      if (!status.empty()) set_channel_status(channel, status);
      channels_.erase(channel);
      checks_.forget(channel);
    }
    note_health(key);
    co_return;
  }

  // A PRIVMSG to a bound channel, or from a bound nick to ours, to each channel bound so.
  void inbound(const std::string& key, const line& l) {
    auto message = read_privmsg(l);
    if (!message) return;
    auto s = sessions_.find(key);
    if (!s) return;
    for (const auto& channel : sessions_.channels_of(key)) {
      auto b = channels_.find(channel);
      if (b == channels_.end() || fold(b->second.target) != message->from ||
          is_channel(b->second.target) != message->to_channel)
        continue;
      host().count("messages_received");
      emits_.emit(channel, message->json, s->hold_emit_slot());  // the reader pauses while too many are unanswered
    }
  }

  // The connection came up or went away: its channels turn connected or degraded by themselves (a restored one
  // still being checked is left to its checks).
  void state_changed(const std::string& key, bool up) {
    const std::string now = up ? "connected" : "degraded";
    for (const auto& channel : sessions_.channels_of(key))
      if (auto b = channels_.find(channel); b != channels_.end() && b->second.shown != now &&
                                            !checks_.awaiting(channel) &&
                                            set_channel_status(channel, now, up ? "" : "target_unreachable"))
        b->second.shown = now;
    note_health(key);
  }

  // Degraded (irc_disconnected) while a connection some channel holds is down.
  void note_health(const std::string& key) {
    auto s = sessions_.find(key);
    health_.set(key, s && sessions_.holders(key) > 0 && !s->registered() ? "irc_disconnected" : "");
  }

  // The channel's connection and target; the refusal to answer with when it has none or the server is away.
  std::shared_ptr<session> session_of(const std::string& channel, std::string& target) {
    auto it = channels_.find(channel);
    auto s = sessions_.of(channel);
    if (it == channels_.end() || !s) return nullptr;
    target = it->second.target;
    return s;
  }

  // A final: its lines are queued in order (they wait out a reconnect) and it is answered once they were written,
  // or after 20 s with verified false while they still go out at the paced rate.
  awaitable<void> send_lines(std::string channel, std::vector<std::string> bodies, completion done) {
    std::string target;
    auto s = session_of(channel, target);
    if (!s) co_return done.ok(ad::send_not_signed_in());
    if (!s->registered()) co_return done.ok(ad::send_target_unreachable());
    done.ok(ad::send_delivered_verified(co_await s->say(target, bodies, clock::now() + 20s)));
  }

  awaitable<void> message_tool(std::string channel, std::vector<std::string> bodies, completion done) {
    std::string target;
    auto s = session_of(channel, target);
    if (!s) co_return done.fail(ad::not_signed_in());
    if (!s->registered()) co_return done.fail(ad::target_unreachable("the IRC server is not connected"));
    if (!co_await s->say(target, bodies, clock::now() + 60s))
      co_return done.fail({"send_timeout", "the lines were queued but not all written in time", false});
    done.ok(ad::tool_sent().with("lines", bodies.size()).json());
  }

  awaitable<void> names_tool(std::string channel, completion done) {
    std::string target;
    auto s = session_of(channel, target);
    if (!s) co_return done.fail(ad::not_signed_in());
    if (!is_channel(target)) co_return done.fail({"not_a_channel", "this conversation is with a nick, not a channel", false});
    auto names = co_await s->names(target, clock::now() + 10s);
    if (!names) co_return done.fail(ad::target_unreachable("the IRC server did not answer NAMES"));
    done.ok(ad::tool_result().with("names", json::value_from(*names)).json());
  }

  settings settings_;
  boost::asio::ssl::context tls_{boost::asio::ssl::context::tls_client};
  ad::health_board health_{host()};
  ad::unrepeatable_emits emits_{host(), "irc: "};  // a line cannot be asked for again
  ad::shared_consumers<session> sessions_{host()};  // by session key, held by the channels bound through them
  ad::channel_checks checks_{*this, health_, [this](const std::string& c) { return verify(c); },
                             [this](const std::string& c) {
                               if (auto b = channels_.find(c); b != channels_.end()) b->second.shown = "connected";
                             }};
  // The event loop's alone:
  std::map<std::string, binding> channels_;  // signed-in channels, by channel id
};

}  // namespace
}  // namespace irc

XCONN_PLUGIN(irc::irc_plugin)
