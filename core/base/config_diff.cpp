#include "core/base/config_diff.hpp"

#include <boost/describe/class.hpp>
#include <boost/describe/members.hpp>
#include <boost/mp11/algorithm.hpp>

namespace xconn {

// The members compared, by their YAML names (config.hpp names each member as its key).
BOOST_DESCRIBE_STRUCT(server_config, (), (listen, public_base_url, api_keys, io_threads, heartbeat_s, hello_timeout_s,
                                          max_frame_bytes, max_outbox_bytes, max_connections,
                                          max_public_body_bytes))
BOOST_DESCRIBE_STRUCT(store_config, (), (path, map_size_bytes, sealing_key_file))
BOOST_DESCRIBE_STRUCT(plugins_config, (), (dir, watch, allow, threads, inline_budget_us, reload_pause_max_calls,
                                           reload_pause_max_s, kv_quota_bytes))
BOOST_DESCRIBE_STRUCT(leases_config, (), (connector_offline_s, unauthenticated_channel_s, max_temporary_per_connector_id,
                                          max_temporary_per_connector))
BOOST_DESCRIBE_STRUCT(delivery_config, (), (window, ack_timeout_s, retry_max_s, send_timeout_s, expiry_s,
                                            max_pending_per_channel, delta_ttl_s, max_open_deltas_per_channel,
                                            completed_ids_s, context_in_text))
BOOST_DESCRIBE_STRUCT(tools_config, (), (timeout_s, idempotency_s))
BOOST_DESCRIBE_STRUCT(files_config, (), (max_bytes, ttl_s, url_ttl_s, upload_min_bytes_per_s, upload_grace_s))
BOOST_DESCRIBE_STRUCT(log_config, (), (format, file, level))

namespace {

template <class Section>
void compare(const char* name, const Section& a, const Section& b, std::vector<std::string>& out) {
  using members = boost::describe::describe_members<Section, boost::describe::mod_public>;
  boost::mp11::mp_for_each<members>([&](auto member) {
    if (!(a.*member.pointer == b.*member.pointer)) out.push_back(std::string(name) + "." + member.name);
  });
}

}  // namespace

std::vector<std::string> restart_only_changes(const config& running, const config& next) {
  std::vector<std::string> out;
  compare("server", running.server, next.server, out);
  compare("store", running.store, next.store, out);
  compare("plugins", running.plugins, next.plugins, out);
  compare("leases", running.leases, next.leases, out);
  compare("delivery", running.delivery, next.delivery, out);
  compare("tools", running.tools, next.tools, out);
  compare("files", running.files, next.files, out);
  compare("log", running.log, next.log, out);
  return out;
}

}  // namespace xconn
