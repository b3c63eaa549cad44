#include "core/control/metrics.hpp"

#include "core/channels/channel_service.hpp"
#include "core/channels/consumer_registry.hpp"
#include "core/channels/lease_service.hpp"

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
  text += "# HELP xconn_packets_dropped_total Packets of a profile their socket did not negotiate.\n"
          "# TYPE xconn_packets_dropped_total counter\nxconn_packets_dropped_total " +
          std::to_string(ctx.profile_dropped.load()) + "\n";
  return text;
}

}  // namespace xconn
