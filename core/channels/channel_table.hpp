// Every user-level channel of the server and every auth flow run on them (spec §8.3-8.14, docs/protocol.md "Channels",
// "Auth flows").
//
// Pure state, no I/O and no locking: the channel service owns one behind its mutex, persists what this
// reports, and injects the clock, so expiry is testable without waiting.
#pragma once

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

// The socket that routes a channel's pushes (a data-plane session). The table only compares and weakly holds it.
class channel_route {
 public:
  virtual ~channel_route() = default;
  virtual void push(std::string packet) = 0;  // thread-safe
  // Thread-safe; written(true) once the frame is on the socket, written(false) if the socket goes first.
  virtual void push(std::string packet, std::function<void(bool written)> written) = 0;
  virtual const std::vector<std::string>& profiles() const = 0;
  virtual const std::string& connector_id() const = 0;
};

struct channel {
  std::string id;
  std::string plugin_id;
  std::string owner;           // the connector_id that last opened it
  bool persistent = false;     // authenticated at least once: durable from then on
  bool authenticated = false;
  boost::json::object binding;  // the plugin's display-level target identity while authenticated
  std::string target_status;    // the plugin's word on the binding (spec §9: degraded, revoked, ...), "" when none
  // The target refused the credential (expired or revoked): tools answer connection_not_authenticated until a new
  // sign-in.
  bool binding_lost() const { return target_status == "expired" || target_status == "revoked"; }
  std::string target_reason;  // the plugin's short code for target_status (target_unreachable, ...), "" when none
  bool verifying = false;  // restored and not yet confirmed by its plugin (on_channel_restore); not persisted
  long long created_at = 0;    // unix ms
  std::chrono::steady_clock::time_point last_used;
  std::weak_ptr<channel_route> route;

  boost::json::object to_record() const;  // what LMDB keeps: no route, no clock
  static std::optional<channel> from_record(std::string_view id, std::string_view json);
};

enum class auth_run_state { running, authenticated, failed, canceled, expired };

struct auth_run {
  std::string id;  // auth_session_id
  std::string channel_id;
  std::string flow_id;
  auth_run_state state = auth_run_state::running;
  std::string failure_code;  // with failed
  std::string secret_inputs;  // the form's secret inputs (JSON text), never persisted here
  std::chrono::steady_clock::time_point last_used;
};

// Why a packet cannot use a channel (docs/protocol.md "Data plane"), in the order they are checked.
enum class route_check { ok, id_required, not_found, other_plugin, not_open };
std::string_view error_code_for(route_check r);

// The statuses a plugin may give a signed-in channel (spec §9): the rest are the host's to derive.
bool is_target_status(std::string_view status);
// A plugin's short code for the status it reports: [a-z_]{1,64}.
bool is_status_reason(std::string_view reason);

// How many temporary (never signed-in) channels one owner (connector_id) and one plugin may hold at once.
struct temporary_caps {
  std::size_t per_owner = SIZE_MAX;
  std::size_t per_plugin = SIZE_MAX;
};

class channel_table {
 public:
  using clock = std::chrono::steady_clock;
  using now_fn = std::function<clock::time_point()>;
  // Auth runs that ended are kept this long, so a late status or cancel still gets their outcome.
  static constexpr std::chrono::hours ended_run_kept{1};

  channel_table(std::chrono::seconds unauthenticated_ttl, now_fn now = clock::now, temporary_caps caps = {});

  // Whether open(plugin_id, requested, owner) would create a channel, and which cap that would pass: "owner",
  // "plugin", or "" when there is room (or nothing would be created).
  std::string_view temporary_cap_reached(std::string_view plugin_id, std::string_view requested,
                                         std::string_view owner) const;
  std::size_t temporary_owned_by(std::string_view owner) const;
  std::size_t temporary_of(std::string_view plugin_id) const;

  // channel.open: reuses requested when it is a channel of plugin_id, else creates one. The route and owner
  // move to the caller either way. Returns the channel and whether it is new.
  std::pair<channel, bool> open(std::string_view plugin_id, std::string_view requested, std::string owner,
                                std::weak_ptr<channel_route> route);
  // A persisted channel read back at start (no route).
  void restore(channel c);

  // The routing checks for every user-level packet but channel.open; marks the channel used when ok.
  route_check check(std::string_view id, std::string_view plugin_id, const channel_route* route,
                    channel* out = nullptr);
  const channel* find(std::string_view id) const;

  // Ends the route if it is route's. Returns whether it was.
  bool close(std::string_view id, const channel_route* route);
  // First or renewed login: binding kept, the channel persistent. Returns the new state, nullopt when gone.
  std::optional<channel> authenticate(std::string_view id, boost::json::object binding);
  // A sign-in that could not be recorded: the channel before.id's sign-in state goes back to before's (route and use
  // kept).
  void undo_authenticate(const channel& before);
  // Logout: binding cleared, running auth runs canceled; the channel stays (persistent stays persistent).
  std::optional<channel> logout(std::string_view id);
  // The plugin reports the state of a signed-in channel's binding (status "" clears it); tools, when given,
  // replace the binding's tools. nullopt when the channel is not a signed-in channel of plugin_id.
  // reason: the plugin's short code for it, kept with it ("" for none; "connected" clears both).
  std::optional<channel> set_target_status(std::string_view id, std::string_view plugin_id, std::string status,
                                           std::optional<boost::json::array> tools, std::string reason = {});

  // Drops temporary channels unused for the ttl and auth runs ended longer than ended_run_kept ago.
  // Returns the dropped channel ids.
  std::vector<std::string> expire(std::vector<std::string>* plugins = nullptr);  // plugins: each one's plugin, in order

  // Auth runs.
  // secret_inputs: the run's secret inputs (JSON), kept in memory until it ends, sealed if it signs the channel in.
  std::string begin_auth(std::string_view channel_id, std::string_view flow_id, std::string secret_inputs = {});
  // The run with this id on this channel, nullopt when there is none.
  std::optional<auth_run> find_auth(std::string_view channel_id, std::string_view auth_session_id);
  // Returns the run's channel ("" when there is no such run).
  std::string end_auth(std::string_view auth_session_id, auth_run_state state, std::string failure_code = {});
  bool auth_running(std::string_view channel_id) const;

  // Forced deregistration: the channel and its auth runs are gone (a later open of the id makes a new one).
  bool erase(std::string_view id);
  // Every channel whose owner is connector_id, temporary ones included.
  std::vector<channel> owned_by(std::string_view connector_id) const;
  std::vector<channel> of_plugin(std::string_view plugin_id) const;
  // The distinct owners of every channel (to give each a lease after a restart).
  std::vector<std::string> owners() const;

  // Channels of plugin_id that have a live route (for pushes).
  std::vector<channel> routed(std::string_view plugin_id) const;
  // Marks every signed-in channel of the plugin as verifying (its plugin restarted) and returns them; a channel
  // whose credential was refused stays as it is until it signs in again.
  std::vector<channel> begin_verifying(std::string_view plugin_id);
  std::size_t size() const { return channels_.size(); }
  // How many channels of plugin_id have a route, and how many are signed in (for /health).
  std::pair<std::size_t, std::size_t> counts(std::string_view plugin_id) const;

 private:
  // Adds delta to the temporary counts of c's owner and plugin when c is temporary.
  void count_temporary(const channel& c, int delta);
  using run_iterator = std::map<std::string, auth_run, std::less<>>::iterator;
  // Erases a run and its entry in runs_by_channel_; returns the next run.
  run_iterator erase_run(run_iterator run);

  std::chrono::seconds ttl_;
  now_fn now_;
  temporary_caps caps_;
  std::map<std::string, std::size_t, std::less<>> temporary_by_owner_, temporary_by_plugin_;
  std::map<std::string, channel, std::less<>> channels_;
  std::map<std::string, auth_run, std::less<>> runs_;
  // channel id -> its runs' ids: a channel's runs without walking every run (100,000 sign-ins keep as many runs).
  std::multimap<std::string, std::string, std::less<>> runs_by_channel_;
};

}  // namespace xconn
