// The channels of the whole server, shared by every data-plane socket: the channel table behind one mutex,
// its durable records in LMDB, a plugin-pool strand per channel, the idempotency log of side-effect tools, the
// sweep of temporary channels, and descriptor pushes when a plugin's health changes.
#pragma once

#include "core/channels/channel_credentials.hpp"
#include "core/channels/channel_table.hpp"
#include "core/channels/credential_use.hpp"
#include "core/base/config.hpp"
#include "core/base/periodic_timer.hpp"
#include "core/plugin_host/connector.hpp"
#include "core/plugin_host/connector_registry.hpp"
#include "core/store/store.hpp"
#include "core/channels/tool_calls.hpp"
#include "core/events/event_log.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>

namespace xconn {

class channel_service {
 public:
  static constexpr std::string_view database = "channels";
  using channel_done = std::function<void(std::optional<channel>, std::error_code)>;

  // Told of channels that ended (temporary ones dropped by the sweep, deregistered ones), outside the lock.
  using dropped_fn = std::function<void(const std::vector<std::string>& channel_ids)>;
  // Told, outside the lock, that a channel holds its credential no more: signed out, found expired or revoked (by
  // a report or a restore), not confirmed by its restore (failed, no answer, an error), deregistered, expired
  // unsigned, or a first sign-in the host could not record. Whatever it held on that credential (its shared
  // consumers) goes; a repeat for the same channel finds nothing left to release.
  using signed_out_fn = std::function<void(const std::string& plugin_id, const std::string& channel_id)>;

  // seal: the key channel credentials are sealed with.
  // events: where every change of a channel's descriptor status is recorded (ChannelStatusChanged).
  channel_service(store& db, const config& cfg, connector_registry& connectors, boost::asio::io_context& io,
                  const sealer& seal, event_log& events, dropped_fn on_dropped = {},
                  channel_table::now_fn now = channel_table::clock::now);

  // Reads the persisted channels back; returns how many. Before any socket is served.
  std::size_t load();
  // Where signed-out channels are told of (set once, before the plugins load; empty to stop telling).
  void on_signed_out(signed_out_fn fn);
  // Starts (stops) the periodic sweep of temporary channels and expired tool records.
  void start();
  void stop();
  // Pushes the descriptors of a plugin's routed channels again (its health or its card changed). Any thread.
  void push_descriptors(const std::string& plugin_id);

  // channel.open: the channel and whether it is new; or, when a new one would pass a cap on temporary channels,
  // no channel and the config key of that cap.
  struct open_outcome {
    channel opened;
    bool created = false;
    std::string_view cap_reached;  // "" when opened
  };
  open_outcome open(const connector& conn, std::string_view requested, const std::shared_ptr<channel_route>& route);
  route_check check(std::string_view id, std::string_view plugin_id, const channel_route* route,
                    channel* out = nullptr);
  bool close(std::string_view id, const channel_route* route);
  // Both report the channel's new state once its record is durable (done runs on the store's writer thread).
  // credentials: the sign-in's secret inputs (a JSON object's text, "" when none), kept sealed in the same commit.
  // A sign-in whose commit fails is undone (undo_sign_in) before done runs with the error.
  void authenticate(std::string_view id, boost::json::object binding, std::string_view credentials, channel_done done);
  // The channel's credentials, for its plugin only; nullopt when none are kept.
  std::optional<std::string> credentials(const connector& conn, const std::string& channel_id) const;
  void logout(std::string_view id, channel_done done);
  // The plugin's report on a signed-in channel of its own (plugin.h xconn_host_channel_status): {"status",
  // "tools"}. Kept durably and pushed as the channel's descriptor. Returns "" when taken, else why not (never
  // quoting the report). Any thread.
  std::string report_status(const connector& conn, std::string_view id, std::string_view report_json);
  // The plugin (re)started: when it verifies restored channels, each signed-in channel of it shows authenticating
  // until its on_channel_restore answers with a report (an error or no answer reads as "error"). Any thread.
  void restore(connector& conn);

  std::string begin_auth(std::string_view channel_id, std::string_view flow_id, std::string secret_inputs = {});
  std::optional<auth_run> find_auth(std::string_view channel_id, std::string_view auth_session_id);
  void end_auth(std::string_view auth_session_id, auth_run_state state, std::string failure_code = {});

  // The descriptor of c as a socket that negotiated profiles sees it, checked; nullopt (logged) when the
  // host would send something the spec forbids.
  std::optional<boost::json::object> descriptor(const connector& conn, const channel& c,
                                                const std::vector<std::string>& profiles);
  // Sends connection.descriptor.push to the channel's route, if it has one.
  // Records the status change, if any, for reason (ChannelStatusChanged) first.
  void push_descriptor(const connector& conn, std::string_view channel_id, std::string_view reason = "descriptor");
  // The tool's status on the channel as the descriptor would show it.
  std::string tool_status(const connector& conn, const channel& c, const std::vector<std::string>& profiles,
                          std::string_view tool_id);

  // Where a channel's pushes go now: its plugin and its route (null when no socket has it open); nullopt when
  // there is no such channel.
  struct route_info {
    std::string plugin_id;
    std::shared_ptr<channel_route> route;
    bool authenticated = false;
    bool binding_lost = false;  // the plugin reported its credential expired or revoked
  };
  std::optional<route_info> route_of(std::string_view channel_id);
  // Why the channel's credential may not be used now (a reply, a tool); nullopt when it may. An unknown channel
  // reads as not signed in.
  std::optional<use_refusal> credential_refusal(std::string_view channel_id);
  // Forced deregistration (leases): the channels, their records and auth runs go; the dropped listener hears
  // of them. done runs once the erase is durable (on the store's writer thread).
  void remove(const std::vector<std::string>& ids, std::function<void(std::error_code)> done = {});
  std::vector<channel> owned_by(std::string_view connector_id);
  // A plugin's channels with the descriptor status each last showed ("" before any), for GET {base}/channels.
  std::vector<std::pair<channel, std::string>> of_plugin(std::string_view plugin_id);
  std::vector<std::string> owners();


  // Calls into the plugin for one channel run one at a time on this strand.
  connector::strand strand_for(connector& conn, std::string_view channel_id);
  tool_calls& calls() { return calls_; }
  // Routed and signed-in channels of a plugin, for /health.
  std::pair<std::size_t, std::size_t> counts(std::string_view plugin_id);
  // Runs the sweep now (tests; the timer runs it periodically).
  void sweep();

 private:
  // Tells the channel's plugin, if loaded, that the channel ended (plugin.h on_channel_end).
  void tell_ended(const std::string& plugin_id, const std::string& channel_id, std::string_view reason);
  // Records ChannelStatusChanged when the channel's descriptor status is not the one last recorded.
  void note_status(std::string_view channel_id, std::string_view reason);
  // The channel's sign-in state back to before's; a first sign-in is signed out of the plugin again.
  void undo_sign_in(const channel& before);
  void signed_out(const std::string& plugin_id, const std::string& channel_id);
  // The answer to a restore (on_channel_restore) is in: a channel it left in error holds its credential no more.
  void restore_answered(connector& conn, const std::string& channel_id, const call_result& r);
  // Saves c's record, with also (its credentials' change) in the same commit.
  void persist(const channel& c, std::function<void(std::error_code)> done = {}, write_batch also = {});

  store& db_;
  const config& cfg_;
  connector_registry& connectors_;
  boost::asio::io_context& io_;
  std::mutex mutex_;
  channel_table table_;
  std::map<std::string, connector::strand, std::less<>> strands_;
  tool_calls calls_;
  channel_credentials credentials_;
  event_log& events_;
  std::map<std::string, std::string, std::less<>> shown_status_;  // by channel: the status last recorded
  dropped_fn dropped_;
  signed_out_fn signed_out_;  // guarded by mutex_
  periodic_timer sweep_timer_;
};

}  // namespace xconn
