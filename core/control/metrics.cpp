#include "core/control/metrics.hpp"

#include "core/channels/channel_service.hpp"
#include "core/channels/consumer_registry.hpp"
#include "core/channels/lease_service.hpp"
#include "core/control/config_reload.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace xconn {
namespace json = boost::json;

json::object inbound_health(const inbound_service::counters& c) {
  return {{"pending", c.pending},       {"accepted", c.accepted}, {"duplicates", c.duplicates},
          {"refused", c.refused},       {"sent", c.sent},         {"redelivered", c.redelivered},
          {"delivered", c.delivered},   {"rejected", c.rejected}, {"expired", c.expired},
          {"evicted", c.evicted}};
}

json::object outbound_health(const outbound_service::counters& c) {
  return {{"finals", c.finals},     {"accepted", c.accepted}, {"duplicates", c.duplicates},
          {"rejected", c.rejected}, {"deltas", c.deltas},     {"activities", c.activities}};
}

namespace {

// One metric family: its HELP and TYPE lines, then one sample per plugin.
struct family {
  const char* name;
  const char* type;
  const char* help;
  std::vector<std::pair<std::string, std::uint64_t>> samples;  // plugin id, value
};

void head(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ").append(name).append(" ");
  out.append(type).append("\n");
}

void sample(std::string& out, std::string_view name, std::string_view labels, std::uint64_t value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(std::to_string(value)).append("\n");
}

std::string plugin_label(const std::string& id) { return "plugin=\"" + id + "\""; }

// Per plugin: latencies, tool outcomes, reloads, hellos, sockets and health.
void render_plugin_metrics(std::string& out, server_context& ctx) {
  auto all = ctx.connectors.all();
  std::map<std::string, std::uint64_t> sockets;
  std::map<std::string, std::uint64_t> outbox, outbox_peak;  // summed, and the most one socket had queued
  for (const auto& s : ctx.sessions.snapshot()) {
    ++sockets[s->plugin_id()];
    outbox[s->plugin_id()] += s->outbox_bytes();
    outbox_peak[s->plugin_id()] = std::max(outbox_peak[s->plugin_id()], s->outbox_peak_bytes());
  }
  struct latency {
    const char* name;
    const char* help;
    histogram plugin_metrics::*of;
  };
  for (const auto& [name, help, of] : {latency{"xconn_tool_invoke_duration_seconds", "A tool call, from its start to its answer.", &plugin_metrics::invoke},
                                       latency{"xconn_send_duration_seconds", "A plugin's send of one final message.", &plugin_metrics::send},
                                       latency{"xconn_emit_commit_seconds", "A plugin's emit until its record is committed (or refused).", &plugin_metrics::emit_commit},
                                       latency{"xconn_reload_pause_seconds", "Calls held while a new generation took over.", &plugin_metrics::reload_pause}}) {
    head(out, name, "histogram", help);
    for (const auto& conn : all) ((*conn->metrics()).*of).render(out, name, plugin_label(conn->id()));
  }
  head(out, "xconn_tool_invocations_total", "counter", "Tool calls by plugin, tool and outcome (ok, error, timeout).");
  for (const auto& conn : all)
    for (const auto& [tool, counts] : conn->metrics()->tools()) {
      static constexpr const char* outcomes[] = {"ok", "error", "timeout"};
      for (std::size_t i = 0; i < counts.size(); ++i)
        sample(out, "xconn_tool_invocations_total",
               plugin_label(conn->id()) + ",tool=\"" + tool + "\",outcome=\"" + outcomes[i] + "\"", counts[i]);
    }
  head(out, "xconn_reloads_total", "counter", "Plugin reloads by outcome (ok: the new generation serves; refused: the old one goes on).");
  for (const auto& conn : all) {
    sample(out, "xconn_reloads_total", plugin_label(conn->id()) + ",outcome=\"ok\"", conn->metrics()->reloads_ok);
    sample(out, "xconn_reloads_total", plugin_label(conn->id()) + ",outcome=\"refused\"", conn->metrics()->reloads_refused);
  }
  head(out, "xconn_hellos_total", "counter", "connector.hello completed on data-plane sockets.");
  for (const auto& conn : all) sample(out, "xconn_hellos_total", plugin_label(conn->id()), conn->metrics()->hellos);
  head(out, "xconn_sockets_open", "gauge", "Data-plane sockets open.");
  for (const auto& conn : all) sample(out, "xconn_sockets_open", plugin_label(conn->id()), sockets[conn->id()]);
  head(out, "xconn_outbox_bytes", "gauge", "Bytes queued on the plugin's open data-plane sockets, not yet written.");
  for (const auto& conn : all) sample(out, "xconn_outbox_bytes", plugin_label(conn->id()), outbox[conn->id()]);
  head(out, "xconn_outbox_peak_bytes", "gauge", "The most one open data-plane socket of the plugin ever had queued.");
  for (const auto& conn : all) sample(out, "xconn_outbox_peak_bytes", plugin_label(conn->id()), outbox_peak[conn->id()]);
  head(out, "xconn_plugin_health", "gauge", "The plugin's health: 2 healthy, 1 degraded, 0 down.");
  for (const auto& conn : all) {
    auto h = conn->health().health;
    sample(out, "xconn_plugin_health", plugin_label(conn->id()),
           h == health_state::healthy ? 2 : h == health_state::degraded ? 1 : 0);
  }
}

// The store, connections and configuration reloads: one sample each.
void render_host_metrics(std::string& out, server_context& ctx) {
  head(out, "xconn_store_commit_duration_seconds", "histogram", "One LMDB write transaction, begin to durable commit.");
  ctx.db.commit_seconds().render(out, "xconn_store_commit_duration_seconds", "");
  head(out, "xconn_store_commit_batch_writes", "histogram", "Write batches per LMDB commit (group commit).");
  ctx.db.commit_writes().render(out, "xconn_store_commit_batch_writes", "");
  head(out, "xconn_store_map_used_bytes", "gauge", "Bytes of the LMDB map in use.");
  sample(out, "xconn_store_map_used_bytes", "", ctx.db.map_used());
  head(out, "xconn_store_map_size_bytes", "gauge", "The LMDB map's size (it grows when full, while the disk has room).");
  sample(out, "xconn_store_map_size_bytes", "", ctx.db.map_size());
  head(out, "xconn_connections_open", "gauge", "HTTP and WebSocket connections open (server.max_connections caps them).");
  sample(out, "xconn_connections_open", "", ctx.open_connections ? ctx.open_connections() : 0);
  head(out, "xconn_build_info", "gauge", "Always 1; the labels say which build of xconnd serves.");
  sample(out, "xconn_build_info", "version=\"" + ctx.build.version + "\",revision=\"" + ctx.build.revision + "\"", 1);
  head(out, "xconn_config_reloads_total", "counter", "Reads of the YAML while serving, by outcome (applied, invalid).");
  sample(out, "xconn_config_reloads_total", "outcome=\"applied\"", ctx.reloader ? ctx.reloader->applied() : 0);
  sample(out, "xconn_config_reloads_total", "outcome=\"invalid\"", ctx.reloader ? ctx.reloader->invalid() : 0);
  head(out, "xconn_config_last_reload_success", "gauge", "1 when the last read of the YAML was valid (or none was made), else 0.");
  sample(out, "xconn_config_last_reload_success", "", !ctx.reloader || ctx.reloader->last_ok() ? 1 : 0);
}

void render(std::string& out, const family& f) {
  out += std::string("# HELP ") + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n";
  for (const auto& [plugin, value] : f.samples)
    out += std::string(f.name) + "{plugin=\"" + plugin + "\"} " + std::to_string(value) + "\n";
}

}  // namespace

std::string render_metrics(server_context& ctx) {
  std::vector<family> families = {
      {"xconn_inbound_pending", "gauge", "Inbound messages waiting for delivery or an ack.", {}},
      {"xconn_inbound_accepted_total", "counter", "Plugin emits stored.", {}},
      {"xconn_inbound_duplicates_total", "counter", "Plugin emits dropped because their msg_id was taken.", {}},
      {"xconn_inbound_refused_total", "counter", "Plugin emits refused.", {}},
      {"xconn_inbound_sent_total", "counter", "Inbound transmissions, redeliveries included.", {}},
      {"xconn_inbound_redelivered_total", "counter", "Inbound transmissions after the first.", {}},
      {"xconn_inbound_delivered_total", "counter", "Inbound messages acknowledged.", {}},
      {"xconn_inbound_rejected_total", "counter", "Inbound messages rejected for good.", {}},
      {"xconn_inbound_expired_total", "counter", "Inbound messages expired undelivered.", {}},
      {"xconn_inbound_evicted_total", "counter", "Inbound messages dropped undelivered (capacity_exceeded).", {}},
      {"xconn_outbound_finals_total", "counter", "Final chat.messages from xAgent.", {}},
      {"xconn_outbound_accepted_total", "counter", "Finals the plugin sent.", {}},
      {"xconn_outbound_duplicates_total", "counter", "Finals answered duplicate.", {}},
      {"xconn_outbound_rejected_total", "counter", "Finals rejected.", {}},
      {"xconn_outbound_deltas_total", "counter", "chat.message.delta packets.", {}},
      {"xconn_channels_open", "gauge", "Channels with a route.", {}},
      {"xconn_channels_authenticated", "gauge", "Channels signed in.", {}},
      {"xconn_consumers_live", "gauge", "Shared target consumers held by at least one channel.", {}},
      {"xconn_tool_inline_calls_total", "counter", "Calls of non_blocking tools run on their socket's I/O thread.", {}},
      {"xconn_tool_inline_overruns_total", "counter",
       "Of those, calls past plugins.inline_budget_us (3 in a row move the tool to the plugin pool).", {}},
  };
  for (const auto& conn : ctx.connectors.all()) {
    const auto& id = conn->id();
    auto in = ctx.inbound.stats(id);
    auto out = ctx.outbound.stats(id);
    auto [open, authenticated] = ctx.channels.counts(id);
    auto inline_tools = conn->inline_tools();
    std::uint64_t values[] = {in.pending,   in.accepted, in.duplicates, in.refused,    in.sent,
                              in.redelivered, in.delivered, in.rejected, in.expired,    in.evicted,
                              out.finals,   out.accepted, out.duplicates, out.rejected, out.deltas,
                              open,         authenticated, ctx.consumers.live(id),
                              inline_tools.calls, inline_tools.overruns};
    for (std::size_t i = 0; i < families.size(); ++i) families[i].samples.emplace_back(id, values[i]);
  }
  std::string text;
  for (const auto& f : families) render(text, f);
  text += "# HELP xconn_plugin_events_total What a plugin counts of its own target (polls, sends, waits, errors).\n"
          "# TYPE xconn_plugin_events_total counter\n";
  for (const auto& conn : ctx.connectors.all())
    for (const auto& [name, value] : conn->counters().snapshot())
      text += "xconn_plugin_events_total{plugin=\"" + conn->id() + "\",name=\"" + name + "\"} " + std::to_string(value) + "\n";
  text += "# HELP xconn_store_commits_total LMDB write transactions committed (one per group of writes).\n"
          "# TYPE xconn_store_commits_total counter\nxconn_store_commits_total " +
          std::to_string(ctx.db.commit_count()) + "\n";
  text += "# HELP xconn_channels_deregistered_total Channels force-deregistered when their connector_id's lease ran out.\n"
          "# TYPE xconn_channels_deregistered_total counter\nxconn_channels_deregistered_total " +
          std::to_string(ctx.leases.deregistered()) + "\n";
  render_plugin_metrics(text, ctx);
  render_host_metrics(text, ctx);
  text += "# HELP xconn_packets_dropped_total Packets of a profile their socket did not negotiate.\n"
          "# TYPE xconn_packets_dropped_total counter\nxconn_packets_dropped_total " +
          std::to_string(ctx.profile_dropped.load()) + "\n";
  return text;
}

}  // namespace xconn
