#include "core/app/server.hpp"

#include "core/base/api_keys.hpp"
#include "core/channels/channel_service.hpp"
#include "core/channels/connector_ids.hpp"
#include "core/plugin_host/connector_registry.hpp"
#include "core/app/http_listener.hpp"
#include "core/channels/consumer_registry.hpp"
#include "core/channels/deferred_logouts.hpp"
#include "core/files/download_links.hpp"
#include "core/files/file_store.hpp"
#include "core/files/plugin_files.hpp"
#include "core/plugin_host/plugin_watcher.hpp"
#include "core/messaging/inbound_service.hpp"
#include "core/channels/lease_service.hpp"
#include "core/messaging/outbound_service.hpp"
#include "core/context/server_context.hpp"
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
  std::optional<api_keys> keys;
  std::unique_ptr<asio::io_context> io;
  std::unique_ptr<asio::thread_pool> pool;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::unique_ptr<connector_registry> connectors;
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
  std::optional<download_links> links;
  std::unique_ptr<server_context> ctx;
  std::shared_ptr<http_listener> listener;
  std::vector<std::thread> threads;
  unsigned short port = 0;
  std::string base_url;
  std::string key_file;
  bool running = false;
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
  impl_->io.reset();
}

std::string server::start() {
  auto& s = *impl_;
  const auto& cfg = s.cfg;
  store_options opts;
  opts.path = cfg.store.path;
  opts.map_size_bytes = cfg.store.map_size_bytes;
  opts.databases = {"meta", std::string(connector_ids::database), "plugin_kv", std::string(channel_service::database),
                    std::string(tool_calls::database), std::string(inbound_service::messages_db),
                    std::string(inbound_service::ids_db), std::string(outbound_service::completed_db),
                    std::string(consumer_registry::database), std::string(file_store::files_db),
                    std::string(file_store::chunks_db), std::string(file_store::by_channel_db),
                    std::string(deferred_logouts::database)};
  auto db = store::open(opts);
  if (!db) return "store: " + db.error();
  s.db = std::move(*db);

  auto keys = api_keys::load(cfg.server.api_keys, cfg.store.path);
  if (!keys) return "api key: " + keys.error();
  s.keys = std::move(*keys);
  s.key_file = s.keys->key_file();
  auto links = download_links::load(*s.db);
  if (!links) return links.error();
  s.links.emplace(std::move(*links));

  s.io = std::make_unique<asio::io_context>();
  s.work.emplace(s.io->get_executor());
  s.pool = std::make_unique<asio::thread_pool>(cfg.plugins.threads);
  s.connectors = std::make_unique<connector_registry>(s.cfg, *s.io, *s.pool);
  s.ids = std::make_unique<connector_ids>(*s.db);
  s.channels = std::make_unique<channel_service>(*s.db, s.cfg, *s.connectors, *s.io);
  s.inbound = std::make_unique<inbound_service>(*s.db, s.cfg, *s.channels, *s.connectors, *s.io);
  s.outbound = std::make_unique<outbound_service>(*s.db, s.cfg, *s.channels, *s.inbound);
  s.consumers = std::make_unique<consumer_registry>(*s.db);
  s.owed_logouts = std::make_unique<deferred_logouts>(*s.db, s.cfg.tools.timeout_s);
  s.leases = std::make_unique<lease_service>(*s.db, s.cfg, *s.channels, *s.connectors, *s.consumers, *s.owed_logouts,
                                             *s.io);
  // Channels force-deregistered while their plugin was gone get its sign-out once it is back.
  s.connectors->on_added([owed = s.owed_logouts.get()](connector& conn) { owed->run(conn); });
  s.files = std::make_unique<file_store>(*s.db, s.cfg.files);
  s.plugin_file_access = std::make_unique<plugin_files>(
      *s.files, [channels = s.channels.get()](std::string_view plugin_id, std::string_view channel_id) {
        auto where = channels->route_of(channel_id);
        return where && where->plugin_id == plugin_id;
      });
  auto& hooks = s.connectors->hooks();
  hooks.files = s.plugin_file_access.get();
  hooks.consumer_acquire = [consumers = s.consumers.get(), channels = s.channels.get()](
                               connector& from, std::string channel_id, std::string key) {
    // Only a channel of this plugin can hold a reference: a stray id would hold one nobody releases.
    auto where = channels->route_of(channel_id);
    if (!where || where->plugin_id != from.id()) return -1;
    return consumers->acquire(from.id(), channel_id, key);
  };
  hooks.consumer_release = [consumers = s.consumers.get(), cfg = &s.cfg](connector& from, std::string channel_id,
                                                                         std::string key) {
    if (consumers->release(from.id(), channel_id, key)) stop_consumers(from, {key}, cfg->tools.timeout_s);
  };
  hooks.health_changed = [channels = s.channels.get()](const std::string& plugin_id, health_state) {
    channels->push_descriptors(plugin_id);
  };
  hooks.emit = [inbound = s.inbound.get()](connector& from, std::string channel_id, std::string json,
                                           std::function<void(emit_outcome)> done) {
    inbound->emit(from, std::move(channel_id), std::move(json), std::move(done));
  };
  // A new generation may change the card (tools, flows, version): open channels get their descriptors again.
  s.connectors->on_reloaded([channels = s.channels.get()](const std::string& plugin_id) {
    channels->push_descriptors(plugin_id);
  });
  s.channels->on_dropped([inbound = s.inbound.get(), outbound = s.outbound.get(),
                          files = s.files.get()](const std::vector<std::string>& ids) {
    inbound->drop_channels(ids);
    outbound->drop_channels(ids);
    files->drop_channels(ids);  // a file_ref is bound to its channel (protocol.md §5)
  });
  s.inbound->on_tick([outbound = s.outbound.get(), connectors = s.connectors.get()] { outbound->tick(*connectors); });
  s.ctx.reset(new server_context{s.cfg, *s.keys, *s.db, *s.connectors, *s.ids, *s.channels, *s.inbound, *s.outbound,
                                 *s.leases, *s.consumers, *s.files, *s.links, {}, {}, {}, {}});
  // A removed plugin's sockets close once its calls are answered; its channels stay stored.
  s.connectors->on_removed([ctx = s.ctx.get()](const std::string& plugin_id) {
    for (auto& session : ctx->sessions.snapshot())
      if (session->plugin_id() == plugin_id) session->shut_down();
  });

  auto endpoint = parse_listen(*s.io, cfg.server.listen);
  if (!endpoint) return endpoint.error();
  s.listener = std::make_shared<http_listener>(*s.io, *s.ctx);
  if (auto err = s.listener->open(*endpoint); !err.empty()) return err;
  auto bound = s.listener->local_endpoint();
  s.port = bound.port();
  std::string host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string();
  s.base_url = cfg.server.public_base_url.empty() ? "http://" + host + ":" + std::to_string(s.port)
                                                  : cfg.server.public_base_url;
  while (!s.base_url.empty() && s.base_url.back() == '/') s.base_url.pop_back();
  s.ctx->public_base_url = s.base_url;
  file_lookup lookup{
      [files = s.files.get()](std::string_view plugin_id, std::string_view channel_id,
                              std::string_view file_ref) -> std::optional<boost::json::object> {
        auto f = files->find_on(plugin_id, channel_id, file_ref);
        return f ? std::optional(f->item()) : std::nullopt;
      },
      [files = s.files.get(), links = &*s.links, base = s.base_url](std::string_view plugin_id,
                                                                   std::string_view file_ref) {
        // Signed when the message carrying it is sent (protocol.md §5).
        return links->url(base, plugin_id, file_ref, files->now() / 1000 + files->settings().url_ttl_s);
      }};
  s.inbound->use_files(lookup);
  s.outbound->use_files(lookup);

  auto restored = s.channels->load();
  auto waiting = s.inbound->load();
  s.outbound->load();
  s.consumers->load();
  // References of channels that are gone (deregistered while a write was lost, say) would never be released.
  for (const auto& [plugin_id, channel_id] : s.consumers->channels())
    if (!s.channels->route_of(channel_id)) s.consumers->release_channel(plugin_id, channel_id);
  auto leased = s.leases->load();
  auto files = s.files->load();
  s.connectors->load_all();
  s.channels->start();
  s.inbound->start();
  s.leases->start();
  s.files->start(*s.io);
  if (cfg.plugins.watch) {
    s.watcher = std::make_unique<plugin_watcher>(*s.io, cfg.plugins.dir,
                                                 [connectors = s.connectors.get()] { connectors->rescan(); });
    if (auto err = s.watcher->start(); !err.empty()) return "plugins.watch: " + err;
  }
  s.listener->run();
  int n = cfg.server.io_threads > 0 ? cfg.server.io_threads : std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < n; ++i) s.threads.emplace_back([io = s.io.get()] { io->run(); });
  s.running = true;
  spdlog::info("listening on {}:{} ({} I/O threads, {} plugins, {} channels restored, {} inbound messages waiting, "
               "{} connector_ids on lease, {} files)",
               host, s.port, n, s.connectors->all().size(), restored, waiting, leased, files);
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
  s.listener->close();
  for (auto& session : s.ctx->sessions.snapshot()) session->shut_down();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (s.ctx->sessions.size() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
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

unsigned short server::port() const { return impl_->port; }
const std::string& server::base_url() const { return impl_->base_url; }
const std::string& server::key_file() const { return impl_->key_file; }
const config& server::settings() const { return impl_->cfg; }

}  // namespace xconn
