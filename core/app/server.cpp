#include "core/app/server.hpp"

#include "core/base/api_keys.hpp"
#include "core/base/thread_name.hpp"
#include "core/channels/channel_service.hpp"
#include "core/channels/connector_ids.hpp"
#include "core/plugin_host/connector_registry.hpp"
#include "core/plugin_host/consumer_key.hpp"
#include "core/app/http_listener.hpp"
#include "core/app/http_session.hpp"
#include "core/channels/consumer_registry.hpp"
#include "core/channels/deferred_logouts.hpp"
#include "core/events/event_log.hpp"
#include "core/files/download_links.hpp"
#include "core/files/file_store.hpp"
#include "core/files/plugin_files.hpp"
#include "core/plugin_host/plugin_watcher.hpp"
#include "core/messaging/inbound_service.hpp"
#include "core/channels/lease_service.hpp"
#include "core/messaging/outbound_service.hpp"
#include "core/context/server_context.hpp"
#include "core/control/config_reload.hpp"
#include "core/store/store.hpp"
#include "core/dataplane/ws_session.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/spdlog.h>

#include <thread>

namespace xconn {
namespace asio = boost::asio;

struct server::impl {
  config cfg;
  std::unique_ptr<store> db;
  std::optional<sealer> seal;  // channel credentials at rest
  std::optional<api_keys> keys;
  std::unique_ptr<asio::io_context> io;
  std::unique_ptr<asio::thread_pool> pool;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::unique_ptr<connector_registry> connectors;
  std::unique_ptr<config_reloader> reloader;
  std::unique_ptr<plugin_watcher> watcher;
  std::unique_ptr<connector_ids> ids;
  std::unique_ptr<channel_service> channels;
  std::unique_ptr<inbound_service> inbound;
  std::unique_ptr<outbound_service> outbound;
  std::unique_ptr<consumer_registry> consumers;
  std::unique_ptr<deferred_logouts> owed_logouts;
  std::unique_ptr<lease_service> leases;
  std::unique_ptr<file_store> files;
  std::unique_ptr<plugin_files> plugin_file_access;
  std::unique_ptr<plugin_kv> plugin_state;
  std::unique_ptr<event_log> events;
  std::optional<download_links> links;
  std::unique_ptr<server_context> ctx;
  std::shared_ptr<http_listener> listener;
  std::vector<std::thread> threads;
  unsigned short port = 0;
  std::string base_url;
  std::string key_file;
  bool running = false;
  std::string build_version, build_revision;

  // start(), step by step.
  std::string open_store_and_keys();
  void build_services();
  std::string listen(std::string& host);
  struct restored_counts {
    std::size_t channels = 0, waiting = 0, leased = 0, files = 0;
  } restored;  // what the store brought back, for the start-up line
  std::string restore_and_start();

  // How the services reach each other: every callback between them, handed over at construction. Each captures
  // this impl and looks its target up when called, so it may name a service built after the one that holds it.
  plugin_host_hooks plugin_hooks();
  connector_registry::events registry_events();
  void record_loaded(connector& conn);
  channel_service::dropped_fn channels_dropped();
  file_lookup message_files();
};

namespace {

// "HOST:PORT" or "[V6]:PORT" to an endpoint; host names resolve once, at start.
boost::system::result<asio::ip::tcp::endpoint, std::string> parse_listen(asio::io_context& io, const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) return "server.listen: expected HOST:PORT";
  std::string host = listen.substr(0, colon);
  std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  asio::ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, port, asio::ip::resolver_base::numeric_service, ec);
  if (ec || results.empty()) return "server.listen: cannot resolve " + host + ": " + ec.message();
  return results.begin()->endpoint();
}

}  // namespace

server::server(config cfg) : impl_(std::make_unique<impl>()) { impl_->cfg = std::move(cfg); }

server::~server() {
  stop();
  // Sockets and pending handlers go before the io_context they belong to, and before the context
  // (sessions unregister from it when they die).
  impl_->listener.reset();
  impl_->watcher.reset();
  impl_->leases.reset();
  impl_->files.reset();  // its collector timer belongs to the io_context
  impl_->consumers.reset();
  impl_->outbound.reset();
  impl_->inbound.reset();   // its tick timer belongs to the io_context
  impl_->channels.reset();  // its sweep timer belongs to the io_context
  impl_->work.reset();      // a start that failed (a port in use) never ran stop(), which lets the work go
  impl_->io.reset();
}

std::string server::impl::open_store_and_keys() {
  store_options opts;
  opts.path = cfg.store.path;
  opts.map_size_bytes = cfg.store.map_size_bytes;
  opts.reserve_bytes = 16ull << 20;  // docs/security.md, "Full disk"
  opts.databases = {"meta", std::string(connector_ids::database), std::string(plugin_kv::database), std::string(channel_service::database),
                    std::string(tool_calls::database), std::string(inbound_service::messages_db),
                    std::string(inbound_service::ids_db), std::string(inbound_service::last_db), std::string(outbound_service::completed_db),
                    std::string(consumer_registry::database), std::string(file_store::files_db),
                    std::string(file_store::chunks_db), std::string(file_store::by_channel_db),
                    std::string(deferred_logouts::database), std::string(channel_credentials::database)};
  auto opened = store::open(opts);
  if (!opened) return "store: " + opened.error();
  db = std::move(*opened);
  auto loaded_keys = api_keys::load(cfg.server.api_keys, cfg.store.path);
  if (!loaded_keys) return "api key: " + loaded_keys.error();
  keys = std::move(*loaded_keys);
  key_file = keys->key_file();
  auto loaded_seal = sealer::load(cfg.store.sealing_key_path());
  if (!loaded_seal) return "sealing key: " + loaded_seal.error();
  seal.emplace(*loaded_seal);
  auto loaded_links = download_links::load(*db);
  if (!loaded_links) return loaded_links.error();
  links.emplace(std::move(*loaded_links));
  return {};
}

plugin_host_hooks server::impl::plugin_hooks() {
  plugin_host_hooks hooks;
  hooks.files = plugin_file_access.get();
  hooks.kv = plugin_state.get();
  hooks.emit = [this](connector& from, std::string channel_id, std::string json, std::vector<kv_op> state,
                      std::function<void(emit_outcome)> done) {
    done = [done = std::move(done), metrics = from.metrics(), start = std::chrono::steady_clock::now()](emit_outcome o) {
      metrics->emit_commit.observe(std::chrono::steady_clock::now() - start);
      done(std::move(o));
    };
    if (state.empty()) return inbound->emit(from, std::move(channel_id), std::move(json), std::move(done));
    auto stage = [this, &from, &state](write_batch& batch) -> std::optional<emit_outcome> {
      auto refused = plugin_state->stage(from.id(), state, batch);
      if (!refused) return std::nullopt;
      return emit_outcome{false, "", false, std::move(refused->code), std::move(refused->message)};
    };
    // A failed commit leaves the staged bytes counted: they are read again from the store.
    auto forget_on_failure = [this, plugin_id = from.id(), done = std::move(done)](emit_outcome o) {
      if (o.code == "store_failed") plugin_state->forget(plugin_id);
      done(std::move(o));
    };
    inbound->emit(from, std::move(channel_id), std::move(json), std::move(forget_on_failure), stage);
  };
  hooks.consumer_acquire = [this](connector& from, std::string channel_id, std::string key) {
    // Only a channel of this plugin can hold a reference: a stray id would hold one nobody releases.
    auto where = channels->route_of(channel_id);
    if (!where || where->plugin_id != from.id()) return -1;
    return consumers->acquire(from.id(), channel_id, key);
  };
  hooks.consumer_release = [this](connector& from, std::string channel_id, std::string key) {
    if (consumers->release(from.id(), channel_id, key))
      from.stop_consumers({key}, std::chrono::seconds(cfg.tools.timeout_s));
  };
  hooks.channel_status = [this](connector& from, std::string channel_id, std::string report) {
    auto why = channels->report_status(from, channel_id, report);
    // A refused credential holds no shared consumer any more (as at a sign-out).
    auto now = channels->route_of(channel_id);
    if (why.empty() && now && now->binding_lost)
      from.stop_consumers(consumers->release_channel(from.id(), channel_id), std::chrono::seconds(cfg.tools.timeout_s));
    return why;
  };
  hooks.consumer_key = [this](const std::string& plugin_id, std::string_view material) {
    return consumer_key_maker(*seal).key(plugin_id, material);
  };
  hooks.base_url = [this](const connector& of) {
    return ctx->public_base_url.empty() ? std::string() : ctx->public_base_url + "/connectors/" + of.id();
  };
  hooks.refused = [this](const connector& from, std::string_view channel_id, std::string_view kind,
                         std::string_view code) {
    auto route = channels->route_of(channel_id);
    events->record_refusal(from.id(), route && route->plugin_id == from.id() ? channel_id : "", kind, code);
  };
  hooks.health_changed = [this](const std::string& plugin_id, health_state h) {
    std::string last_error;
    if (auto conn = connectors->find(plugin_id)) last_error = conn->health().last_error_code;
    boost::json::object payload{{"health", to_string(h)}};
    if (!last_error.empty()) payload["last_error_code"] = last_error;
    events->record(plugin_id, {"AdapterFault", "", "", "", std::move(payload)});
    channels->push_descriptors(plugin_id);
  };
  return hooks;
}

connector_registry::events server::impl::registry_events() {
  return {
      // Channels force-deregistered while their plugin was gone get its sign-out once it is back.
      // Its signed-in channels are verified by it before they show connected (when it has on_channel_restore).
      .added =
          [this](connector& conn) {
            record_loaded(conn);
            owed_logouts->run(conn);
            channels->restore(conn);
          },
      // A new generation may change the card (tools, flows, version): open channels get their descriptors again,
      // and the new build verifies the signed-in ones.
      .reloaded =
          [this](const std::string& plugin_id) {
            channels->push_descriptors(plugin_id);
            if (auto conn = connectors->find(plugin_id)) {
              record_loaded(*conn);
              channels->restore(*conn);
            }
          },
      // A removed plugin's sockets close once its calls are answered; its channels stay stored.
      .removed =
          [this](const std::string& plugin_id) {
            for (auto& session : ctx->sessions.snapshot())
              if (session->plugin_id() == plugin_id) session->shut_down();
          },
  };
}

// AdapterLoaded, on the reload thread (which may wait for the store: the seq reservation is written first).
void server::impl::record_loaded(connector& conn) {
  events->open(conn.id());
  events->record(conn.id(), {"AdapterLoaded", "", "", "",
                             boost::json::object{{"generation", conn.generation()},
                                                 {"version", conn.manifest()->card_version},
                                                 {"config_digest", conn.config_digest()}}});
}

channel_service::dropped_fn server::impl::channels_dropped() {
  return [this](const std::vector<std::string>& ids) {
    inbound->drop_channels(ids);
    outbound->drop_channels(ids);
    files->drop_channels(ids);  // a file_ref is bound to its channel (docs/protocol.md "Files")
  };
}

file_lookup server::impl::message_files() {
  return {[this](std::string_view plugin_id, std::string_view channel_id,
                 std::string_view file_ref) -> std::optional<boost::json::object> {
            auto f = files->find_on(plugin_id, channel_id, file_ref);
            return f ? std::optional(f->item()) : std::nullopt;
          },
          [this](std::string_view plugin_id, std::string_view file_ref) {
            // Signed when the message carrying it is sent (docs/protocol.md "Files").
            return links->url(base_url, plugin_id, file_ref, files->now() / 1000 + files->settings().url_ttl_s);
          },
          [this](std::string_view plugin_id, std::string_view channel_id, std::string_view file_ref) {
            if (auto f = files->find_on(plugin_id, channel_id, file_ref)) files->remove(f->file_ref);
          }};
}

void server::impl::build_services() {
  io = std::make_unique<asio::io_context>();
  work.emplace(io->get_executor());
  pool = std::make_unique<asio::thread_pool>(cfg.plugins.threads);
  files = std::make_unique<file_store>(*db, cfg.files);
  plugin_state = std::make_unique<plugin_kv>(*db, cfg.plugins.kv_quota_bytes);
  events = std::make_unique<event_log>(*db, [this](std::string_view plugin_id) {
    auto conn = connectors->find(plugin_id);
    return conn ? target_provider(*conn->manifest()) : std::string(plugin_id);
  });
  plugin_file_access = std::make_unique<plugin_files>(
      *files, [this](std::string_view plugin_id, std::string_view channel_id) {
        auto where = channels->route_of(channel_id);
        return where && where->plugin_id == plugin_id;
      });
  connectors = std::make_unique<connector_registry>(cfg, *io, *pool, plugin_hooks(), registry_events());
  ids = std::make_unique<connector_ids>(*db);
  channels = std::make_unique<channel_service>(*db, cfg, *connectors, *io, *seal, *events, channels_dropped());
  inbound = std::make_unique<inbound_service>(*db, cfg, *channels, *connectors, *io, *events, message_files(),
                                              [this] { outbound->tick(*connectors); });
  outbound = std::make_unique<outbound_service>(
      *db, cfg, *channels, *events, [this](std::string_view channel_id) { return inbound->last_delivered(channel_id); },
      message_files());
  consumers = std::make_unique<consumer_registry>(*db);
  owed_logouts = std::make_unique<deferred_logouts>(*db, cfg.tools.timeout_s);
  leases = std::make_unique<lease_service>(*db, cfg, *channels, *connectors, *consumers, *owed_logouts, *io);
  ctx.reset(new server_context{cfg, *keys, *db, *connectors, *ids, *channels, *inbound, *outbound, *leases,
                               *consumers, *files, *links, *events, *io, {}, message_files(), {}, {}, {}, {}, {}, {}, {}});
  ctx->build = {build_version, build_revision};
  reloader = std::make_unique<config_reloader>(cfg, *connectors);
  ctx->reloader = reloader.get();
}

std::string server::impl::listen(std::string& host) {
  auto endpoint = parse_listen(*io, cfg.server.listen);
  if (!endpoint) return endpoint.error();
  listener = std::make_shared<http_listener>(
      *io, cfg.server.max_connections, [this](asio::ip::tcp::socket&& socket, connection_slots::slot slot) {
        std::make_shared<http_session>(std::move(socket), std::move(slot), *ctx)->run();
      });
  if (auto err = listener->open(*endpoint); !err.empty()) return err;
  ctx->open_connections = [l = listener.get()] { return l->open_connections(); };
  auto bound = listener->local_endpoint();
  port = bound.port();
  host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string();
  base_url = cfg.server.public_base_url.empty() ? "http://" + host + ":" + std::to_string(port)
                                                : cfg.server.public_base_url;
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  ctx->public_base_url = base_url;
  return {};
}

std::string server::impl::restore_and_start() {
  restored.channels = channels->load();
  restored.waiting = inbound->load();
  outbound->load();
  consumers->load();
  // References of channels that are gone (deregistered while a write was lost, say) would never be released.
  for (const auto& [plugin_id, channel_id] : consumers->channels())
    if (!channels->route_of(channel_id)) consumers->release_channel(plugin_id, channel_id);
  restored.leased = leases->load();
  restored.files = files->load();
  connectors->load_all();
  channels->start();
  inbound->start();
  leases->start();
  files->start(*io);
  if (cfg.plugins.watch) {
    watcher = std::make_unique<plugin_watcher>(*io, cfg.plugins.dir, [this] { connectors->rescan(); });
    if (auto err = watcher->start(); !err.empty()) return "plugins.watch: " + err;
  }
  return {};
}

std::string server::start() {
  auto& s = *impl_;
  if (auto err = s.open_store_and_keys(); !err.empty()) return err;
  s.build_services();
  std::string host;
  if (auto err = s.listen(host); !err.empty()) return err;
  if (auto err = s.restore_and_start(); !err.empty()) return err;
  s.listener->run();
  int n = s.cfg.server.io_threads > 0 ? s.cfg.server.io_threads : std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < n; ++i)
    s.threads.emplace_back([io = s.io.get(), i] {
      name_this_thread("xconn-io-" + std::to_string(i));
      io->run();
    });
  s.running = true;
  spdlog::info("listening on {}:{} ({} I/O threads, {} plugins, {} channels restored, {} inbound messages waiting, "
               "{} connector_ids on lease, {} files)",
               host, s.port, n, s.connectors->all().size(), s.restored.channels, s.restored.waiting, s.restored.leased,
               s.restored.files);
  for (const auto& c : s.connectors->all())
    spdlog::info("connector base URL: {}/connectors/{}", s.base_url, c->id());
  return {};
}

void server::stop() {
  auto& s = *impl_;
  if (!s.running) {
    if (s.pool) s.pool->join();
    return;
  }
  s.running = false;
  spdlog::info("shutting down");
  s.ctx->stopping = true;
  s.events->wake_all();  // long polls answer now
  s.listener->close();
  for (auto& session : s.ctx->sessions.snapshot()) session->shut_down();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (s.ctx->sessions.size() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // A peer that never answered the close is dropped, and its session ends while the I/O threads still run and what
  // it reports to on its way out (leases, channels) still exists.
  for (auto& session : s.ctx->sessions.snapshot()) session->abort();
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (s.ctx->sessions.size() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (s.ctx->sessions.size() > 0) spdlog::warn("{} data-plane sockets still open at shutdown", s.ctx->sessions.size());
  if (s.watcher) s.watcher->stop();
  s.channels->stop();
  s.inbound->stop();
  s.leases->stop();
  s.files->stop();
  s.connectors->stop_all();
  s.db->flush();
  s.work.reset();
  s.io->stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  s.pool->join();
  spdlog::info("stopped");
}

void server::rescan_plugins() {
  if (impl_->running) impl_->connectors->rescan();
}

void server::set_build(std::string version, std::string revision) {
  impl_->build_version = std::move(version);
  impl_->build_revision = std::move(revision);
}

void server::reload_config() {
  if (impl_->running) impl_->reloader->reload("", [](const reload_report&) {});
}

unsigned short server::port() const { return impl_->port; }
const std::string& server::base_url() const { return impl_->base_url; }
const std::string& server::key_file() const { return impl_->key_file; }
const config& server::settings() const { return impl_->cfg; }

}  // namespace xconn
