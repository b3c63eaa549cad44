// The irc plugin (docs/adapters.md "irc"): a channel is an IRC channel or a nick reached through one connection per
// (server, nick, password), a host shared consumer held by every channel bound through it. All IRC work runs on the
// plugin's own event loop (one thread); the host's calls hand their work to it and never wait for it there.
#include "irc_config.hpp"
#include "irc_input.hpp"
#include "irc_manifest.hpp"
#include "irc_session.hpp"
#include "irc_text.hpp"
#include "kit/consumer_key.hpp"
#include "kit/emit_refusal.hpp"
#include "kit/guarded_spawn.hpp"
#include "kit/json_fields.hpp"
#include "kit/tls_client.hpp"
#include "kit/utf8_bound.hpp"

#include <xconn/plugin.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
// Boost.JSON compiled into this library (header-only mode, hidden); exactly one translation unit includes it.
#include <boost/json/src.hpp>


#include <condition_variable>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace irc {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using xconn::sdk::completion;
using xconn::sdk::kv_batch;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

using xconn::kit::parse_object;
using xconn::kit::string_at;

// What identifies a connection. It holds the password: only ever turned into a key, never kept or logged.
std::string session_material(const login& l) {
  return l.host + "\n" + l.port + "\n" + (l.tls ? "tls" : "plain") + "\n" + l.nick + "\n" + l.password;
}
// The shared consumer of a connection: the host's HMAC of what identifies it (kit/consumer_key.hpp).
std::string session_key(const xconn::sdk::host& host, const login& l) {
  return xconn::kit::consumer_key(host, "irc-", session_material(l));
}

// IRCv3 server-time ("2026-12-06T07:42:44.123Z") in unix milliseconds; 0 when it is not that.
long long server_time_ms(const std::string& t) {
  std::tm tm{};
  int millis = 0;
  char zone = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &millis, &zone) != 8 || zone != 'Z')
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<long long>(timegm(&tm)) * 1000 + millis;
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string refusal_message(const std::string& code) {
  if (code == "invalid_credentials") return "the IRC server refused the password";
  if (code == "nick_in_use") return "that nick is in use on the server";
  if (code == "invalid_input") return "the IRC server refused the nick";
  if (code == "join_refused") return "the IRC server refused to let the nick join that channel";
  return "the IRC server did not answer";
}

// Only the server's own refusal of the password or the nick (or of the channel) is a verdict on the credential;
// anything else (no answer, a ghost holding the nick) leaves the channel degraded and retried.
bool refuses_credential(const std::string& outcome) {
  return outcome == "invalid_credentials" || outcome == "invalid_input" || outcome == "join_refused";
}

// A restore's answer while the server cannot be reached.
std::string degraded_report(const std::string& outcome) {
  return xconn::sdk::channel_report("degraded", outcome == "nick_in_use" ? outcome : "target_unreachable");
}

class irc_plugin final : public xconn::sdk::plugin {
 public:
  static std::string manifest() { return manifest_json(XCONN_PLUGIN_BUILD_VERSION); }
  static std::string validate_config(std::string_view section_json) {
    auto section = parse_object(section_json);
    return section ? check_section(*section, nullptr) : "section: must be a JSON object";
  }
  static constexpr bool verifies_restored_channels = true;

  irc_plugin(xconn::sdk::host host, std::string_view section_json) : host_(host) {
    if (auto section = parse_object(section_json)) check_section(*section, &settings_);
    if (auto refused = xconn::kit::trust_for_clients(tls_, settings_.ca_file); !refused.empty())
      host_.warn("irc: " + refused + "; only the system store is trusted");
  }
  ~irc_plugin() override { halt(); }

  void start(completion done) override {
    runner_ = std::thread([this] {
      io_.run();
      std::lock_guard lock(ran_mutex_);
      ran_out_ = true;
      ran_cv_.notify_all();
    });
    done.ok();
  }
  void stop(completion done) override {
    halt();
    done.ok();
  }

  void auth_start(std::string_view channel, std::string_view flow_id, std::string_view, std::string_view input_json,
                  completion done) override {
    if (flow_id != "irc_login") return done.fail({"auth_flow_not_found", "no such auth flow", false});
    login l;
    auto refused = read_login(parse_object(input_json).value_or(json::object{}), l);
    if (!refused.empty()) return done.fail({"invalid_input", refused, false});
    spawn(sign_in(std::string(channel), std::move(l), std::move(done)));
  }

  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override {
    auto kept = host_.kv_get("bind/" + std::string(channel));
    auto fields = parse_object(kept.value_or("")).value_or(json::object{});
    auto credentials = parse_object(credentials_json).value_or(json::object{});
    if (auto* password = credentials.if_contains("password")) fields["password"] = *password;
    login l;
    if (!kept || !read_login(fields, l).empty()) return done.ok(xconn::sdk::channel_report("expired"));
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
    asio::post(io_, [this, key = std::string(key)] {
      if (auto it = sessions_.find(key); it != sessions_.end()) {
        it->second->close();
        sessions_.erase(it);
        report_health();
      }
    });
    done.ok();
  }

  void send(std::string_view channel, std::string_view reply_json, completion done) override {
    auto reply = parse_object(reply_json).value_or(json::object{});
    auto bodies = split_message(string_at(reply, "text"));
    // IRC carries no files: each is announced by name with its link.
    if (auto* files = reply.if_contains("files"); files && files->is_array())
      for (const auto& f : files->as_array())
        if (f.is_object() && !string_at(f.as_object(), "download_url").empty())
          for (auto& part : split_message(string_at(f.as_object(), "filename") + " " +
                                          string_at(f.as_object(), "download_url")))
            bodies.push_back(std::move(part));
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
    done.fail({"tool_not_found", "no such tool", false});
  }

 private:
  struct binding {
    std::string key;     // the session's
    std::string target;  // "#ops" or a nick
    // What the host was last told of the channel: "connected", "degraded" (the server away), or "" while a
    // restore has not answered yet (its answer tells).
    std::string shown = "connected";
  };

  // Every coroutine runs on the plugin's event loop, guarded: an exception is logged, never let out of it.
  void spawn(awaitable<void> work) { xconn::kit::spawn_guarded(io_, host_, "irc", std::move(work)); }

  // Closes every connection (QUIT), gives them two seconds to go, then stops the loop.
  void halt() {
    if (!runner_.joinable()) return;
    asio::post(io_, [this] {
      for (auto& [key, s] : sessions_) s->close();
    });
    work_.reset();
    {
      std::unique_lock lock(ran_mutex_);
      ran_cv_.wait_for(lock, 2s, [this] { return ran_out_; });
    }
    io_.stop();
    runner_.join();
    for (auto& [key, s] : sessions_) s->abandon();
    sessions_.clear();
  }

  // The session of a login: the one already open for its (server, nick, password), else a new one, connecting.
  std::shared_ptr<session> session_for(const login& l) {
    auto key = session_key(host_, l);
    if (auto it = sessions_.find(key); it != sessions_.end()) return it->second;
    session_options options{l.host, l.port, l.tls, l.nick, l.password, std::chrono::seconds(settings_.connect_timeout_s),
                            settings_.lines_per_second};
    session_events events;
    events.on_line = [this, key](const line& message) { inbound(key, message); };
    events.on_state = [this, key](bool up) { state_changed(key, up); };
    events.on_refused = [this, key](const std::string& code) { refused_later(key, code); };
    events.on_count = [this](const std::string& name) { host_.count(name); };
    auto s = std::make_shared<session>(io_, tls_, std::move(options), std::move(events));
    sessions_[key] = s;
    s->run();
    return s;
  }

  bool used(const std::string& key) const {
    for (const auto& [channel, b] : channels_)
      if (b.key == key) return true;
    return false;
  }
  // A session a sign-in opened and nobody came to hold: closed.
  void discard_if_unused(const std::string& key) {
    if (used(key)) return;
    if (auto it = sessions_.find(key); it != sessions_.end()) {
      it->second->close();
      sessions_.erase(it);
    }
  }

  awaitable<void> sign_in(std::string channel, login l, completion done) {
    auto key = session_key(host_, l);
    auto s = session_for(l);
    auto outcome = co_await s->ready(clock::now() + std::chrono::seconds(settings_.connect_timeout_s));
    if (outcome.empty() && is_channel(l.target)) outcome = co_await s->join(l.target, clock::now() + 10s);
    if (!outcome.empty()) {
      discard_if_unused(key);
      co_return done.fail({outcome, refusal_message(outcome), outcome == "target_unreachable"});
    }
    json::object kept{{"server", l.server()}, {"nick", l.nick}, {"target", l.target}, {"tls", l.tls ? "true" : "false"}};
    auto written = co_await kv_write(kv_batch().put("bind/" + channel, json::serialize(kept)));
    if (!written) {
      discard_if_unused(key);
      co_return done.fail({"store_failed", "the binding could not be kept", true});
    }
    bind(channel, {key, l.target});
    json::object binding{{"display_name", l.target + " on " + l.host}, {"account_hint", l.nick}};
    done.ok(json::serialize(json::object{{"status", "authenticated"}, {"binding", std::move(binding)}}));
  }

  // A restored channel: its connection is held again at once (it keeps trying while the server is away), and the
  // channel is shown connected once the server took the nick and the channel was joined.
  awaitable<void> restore(std::string channel, login l, completion done) {
    auto key = session_key(host_, l);
    auto s = session_for(l);
    bind(channel, {key, l.target, ""});
    // A channel signed in before the keys were HMACs still holds the bare hash: let go of it (docs/irc.md).
    if (auto legacy = xconn::kit::legacy_consumer_key("irc-", session_material(l)); legacy != key)
      host_.release_consumer(channel, legacy);
    auto outcome = co_await s->ready(clock::now() + std::chrono::seconds(settings_.connect_timeout_s));
    // While the server is away the channel is still wanted: join() keeps it, so the reconnect joins it.
    if (is_channel(l.target) && (outcome.empty() || outcome == "target_unreachable")) {
      auto joined = co_await s->join(l.target, clock::now() + 10s);
      if (outcome.empty()) outcome = joined;
    }
    if (refuses_credential(outcome)) {
      channels_.erase(channel);
      discard_if_unused(key);
      co_return done.ok(xconn::sdk::channel_report("revoked"));
    }
    auto it = channels_.find(channel);
    if (it == channels_.end()) co_return done.ok(xconn::sdk::channel_report("revoked"));  // refused meanwhile
    // The server away (or the nick still held by a ghost): degraded, and the session keeps trying (1 s doubling to
    // 60 s); state_changed pushes connected once it registered.
    bool up = outcome.empty() || s->registered();
    it->second.shown = up ? "connected" : "degraded";
    done.ok(up ? xconn::sdk::channel_report("connected") : degraded_report(outcome));
  }

  awaitable<bool> kv_write(const kv_batch& batch) {
    auto signal = std::make_shared<one_shot>();
    auto ok = std::make_shared<std::atomic<bool>>(false);
    host_.kv_write(batch, [this, signal, ok](xconn::sdk::kv_result r) {
      *ok = r.ok;
      asio::post(io_, [signal] { signal->set(); });
    });
    co_await signal->wait(clock::now() + 30s);
    co_return ok->load();
  }

  void bind(const std::string& channel, binding b) {
    if (auto it = channels_.find(channel); it != channels_.end() && it->second.key != b.key) unbind_from(it->second);
    if (host_.acquire_consumer(channel, b.key) < 0) host_.warn("irc: a consumer was refused");
    channels_[channel] = std::move(b);
    report_health();
  }
  // Leaves the channel's IRC channel when no other binding of that connection is in it.
  void unbind_from(const binding& b) {
    if (!is_channel(b.target)) return;
    for (const auto& [other, ob] : channels_)
      if (&ob != &b && ob.key == b.key && fold(ob.target) == fold(b.target)) return;
    if (auto it = sessions_.find(b.key); it != sessions_.end()) it->second->part(b.target);
  }

  awaitable<void> forget(std::string channel) {
    if (auto it = channels_.find(channel); it != channels_.end()) {
      auto b = it->second;
      channels_.erase(it);
      unbind_from(b);
    }
    host_.kv_write(kv_batch().erase("bind/" + channel));
    report_health();
    co_return;
  }

  // A PRIVMSG to a bound channel, or from a bound nick to ours, to each channel bound so.
  void inbound(const std::string& key, const line& l) {
    if (l.command != "PRIVMSG" || l.params.size() < 2) return;
    auto nick = to_valid_utf8(l.nick(), true);
    auto text = message_text(l.params[1], nick);
    if (!text || nick.empty()) return;
    *text = to_valid_utf8(*text);
    bool to_channel = is_channel(l.params[0]);
    json::object message{{"text", *text}, {"sender_name", xconn::kit::emit_display_field(nick)}};
    auto account = l.tags.find("account");
    message["sender_id"] = account != l.tags.end() && !account->second.empty() ? to_valid_utf8(account->second, true) : nick;
    // A msgid past the host's 256 bytes would cost the whole line: it goes without one (and without dedup).
    if (auto id = l.tags.find("msgid"); id != l.tags.end() && !id->second.empty()) {
      auto msg_id = to_valid_utf8(id->second, true);
      if (msg_id.size() <= xconn::kit::emit_field_max_bytes) message["msg_id"] = std::move(msg_id);
    }
    auto time = l.tags.find("time");
    long long at = time == l.tags.end() ? 0 : server_time_ms(time->second);
    message["at"] = at > 0 ? at : now_ms();
    message["channel_key"] = to_valid_utf8(to_channel ? "irc/group/" + l.params[0] : "irc/direct/" + nick, true);
    auto body = json::serialize(message);
    auto from = fold(to_channel ? l.params[0] : nick);
    for (const auto& [channel, b] : channels_) {
      if (b.key != key || fold(b.target) != from || is_channel(b.target) != to_channel) continue;
      host_.count("messages_received");
      host_.emit(channel, body, [host = host_, slot = emit_slot(key), refusals = refusals_](xconn::sdk::emit_result r) {
        if (r.ok) return;
        // A line cannot be asked for again: a refused one is dropped either way. One the host refused as invalid is
        // final (its `error` event is the host's); the two kinds are told apart, logged at the 1st, 2nd, 4th, ...
        bool final_refusal = xconn::kit::emit_refused_for_good(r.failure.code);
        host.count(final_refusal ? "lines_refused" : "lines_not_stored");
        if (auto n = (final_refusal ? refusals->invalid : refusals->not_stored).count())
          host.warn("irc: " + std::to_string(n) + (final_refusal ? " line(s) refused by the host, dropped (last: "
                                                                  : " message(s) not stored (last: ") +
                    r.failure.code + (final_refusal ? ": " + r.failure.message : std::string()) + ")");
      });
    }
  }

  // Held by an emit until the host answered it: the connection reads no further while too many are unanswered.
  std::shared_ptr<void> emit_slot(const std::string& key) {
    auto it = sessions_.find(key);
    return it == sessions_.end() ? nullptr : it->second->hold_emit_slot();
  }

  // The connection came up or went away: its channels turn connected or degraded by themselves (a channel whose
  // restore has not answered yet is left to that answer).
  void state_changed(const std::string& key, bool up) {
    const std::string now = up ? "connected" : "degraded";
    for (auto& [channel, b] : channels_)
      if (b.key == key && !b.shown.empty() && b.shown != now &&
          report_status(channel, now, up ? std::string() : "target_unreachable"))
        b.shown = now;
    report_health();
  }

  // The server refused the password or the nick on a reconnect: the channels bound through it are revoked.
  void refused_later(const std::string& key, const std::string&) {
    for (auto it = channels_.begin(); it != channels_.end();) {
      if (it->second.key != key) {
        ++it;
        continue;
      }
      report_status(it->first, "revoked", {});
      it = channels_.erase(it);
    }
    sessions_.erase(key);
    report_health();
  }

  // A channel's status pushed to the host; reason a short code, "" for none. Whether the host took it.
  bool report_status(const std::string& channel, const std::string& status, const std::string& reason) {
    return host_.set_channel_status(channel, status, {}, reason);
  }

  // Degraded while a connection some channel holds is down.
  void report_health() {
    for (const auto& [channel, b] : channels_)
      if (auto it = sessions_.find(b.key); it != sessions_.end() && !it->second->registered())
        return host_.report_health(XCONN_HEALTH_DEGRADED, "irc_disconnected");
    host_.report_health(XCONN_HEALTH_HEALTHY);
  }

  std::shared_ptr<session> session_of(const std::string& channel, std::string* target) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return nullptr;
    auto s = sessions_.find(it->second.key);
    if (s == sessions_.end()) return nullptr;
    *target = it->second.target;
    return s->second;
  }

  // A final: its lines are queued in order (they wait out a reconnect) and it is answered once they were written,
  // or after 20 s with verified false while they still go out at the paced rate.
  awaitable<void> send_lines(std::string channel, std::vector<std::string> bodies, completion done) {
    std::string target;
    auto s = session_of(channel, &target);
    if (!s) co_return done.ok(R"({"ok":false,"error":"connection_not_authenticated","retryable":false})");
    if (!s->registered()) co_return done.ok(R"({"ok":false,"error":"target_unreachable","retryable":true})");
    auto batch = s->say(target, bodies);
    auto done_signal = batch->done;
    bool written = co_await done_signal->wait(clock::now() + 20s) && batch->remaining == 0;
    done.ok(json::serialize(json::object{{"ok", true}, {"verified", written}}));
  }

  awaitable<void> message_tool(std::string channel, std::vector<std::string> bodies, completion done) {
    std::string target;
    auto s = session_of(channel, &target);
    if (!s) co_return done.fail({"connection_not_authenticated", "the channel is not signed in", false});
    if (!s->registered()) co_return done.fail({"target_unreachable", "the IRC server is not connected", true});
    auto batch = s->say(target, bodies);
    auto done_signal = batch->done;
    bool written = co_await done_signal->wait(clock::now() + 60s) && batch->remaining == 0;
    if (!written) co_return done.fail({"send_timeout", "the lines were queued but not all written in time", false});
    done.ok(json::serialize(json::object{{"status", "sent"}, {"lines", bodies.size()}}));
  }

  awaitable<void> names_tool(std::string channel, completion done) {
    std::string target;
    auto s = session_of(channel, &target);
    if (!s) co_return done.fail({"connection_not_authenticated", "the channel is not signed in", false});
    if (!is_channel(target)) co_return done.fail({"not_a_channel", "this conversation is with a nick, not a channel", false});
    auto names = co_await s->names(target, clock::now() + 10s);
    if (!names) co_return done.fail({"target_unreachable", "the IRC server did not answer NAMES", true});
    json::array list;
    for (auto& n : *names) list.emplace_back(n);
    done.ok(json::serialize(json::object{{"names", std::move(list)}}));
  }

  xconn::sdk::host host_;
  settings settings_;
  asio::ssl::context tls_{asio::ssl::context::tls_client};
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{io_.get_executor()};
  std::thread runner_;
  std::mutex ran_mutex_;
  std::condition_variable ran_cv_;
  bool ran_out_ = false;
  // The event loop's alone:
  std::map<std::string, std::shared_ptr<session>> sessions_;  // by session key
  std::map<std::string, binding> channels_;                   // signed-in channels, by channel id
  struct refusal_tallies {
    xconn::kit::refusal_tally invalid, not_stored;
  };
  std::shared_ptr<refusal_tallies> refusals_ = std::make_shared<refusal_tallies>();  // shared with emit callbacks
};

}  // namespace
}  // namespace irc

XCONN_PLUGIN(irc::irc_plugin)
