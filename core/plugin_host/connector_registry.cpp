#include "core/plugin_host/connector_registry.hpp"

#include "core/base/ids.hpp"
#include "core/plugin_host/start_crash_records.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <set>

namespace xconn {

namespace {

// A generation reports its health to its connector while that exists (a hung generation may outlive it).
plugin_generation::health_listener health_of(const std::shared_ptr<connector>& conn) {
  return [owner = std::weak_ptr<connector>(conn)](const plugin_generation& from, health_state h) {
    if (auto c = owner.lock()) c->health_changed(from, h);
  };
}

// The refusal line of a start that failed, threw or ran out of time.
std::string start_failure(const call_result& started) {
  return "start failed: " + (started.code.empty() ? std::string("error") : started.code) +
         (started.thrown ? " (threw: " + started.message + ")" : "");
}

// A generation's start with its marker in the cache until it returns: a crash meanwhile is remembered at the next
// start-up and refuses this build from then on. The marker's folder is synced when it goes out of scope: the
// caller keeps it until a reload's pause is over.
call_result start_marked(plugin_generation& g, start_marker& marker) {
  auto started = g.start(connector_registry::start_limit);
  marker.returned();
  return started;
}

start_marker marker_for(const plugin_generation& g, const std::filesystem::path& cache_dir) {
  return start_marker(cache_dir, g.library().sha256, g.id(), g.library().file);
}

}  // namespace

connector_registry::connector_registry(const config& cfg, boost::asio::io_context& io, boost::asio::thread_pool& pool,
                                       plugin_host_hooks hooks, events told)
    : config_(cfg),
      io_(io),
      pool_(pool),
      cache_dir_(std::filesystem::path(cfg.store.path) / "plugin-cache"),
      hooks_(std::move(hooks)),
      told_(std::move(told)),
      sections_(cfg.connectors) {}

connector_registry::~connector_registry() {
  stopping_ = true;
  reload_thread_.join();
}

void connector_registry::refuse(const std::filesystem::path& file, std::string reason) {
  spdlog::error("plugin {} refused: {}", file.filename().string(), reason);
  std::lock_guard lock(mutex_);
  std::erase_if(refused_, [&](const refused_plugin& r) { return r.file == file.string(); });
  refused_.push_back({file.string(), file.stem().string(), std::move(reason)});
}

void connector_registry::clear_refusal(const std::string& plugin_id) {
  refused_sha_.erase(plugin_id);
  std::lock_guard lock(mutex_);
  std::erase_if(refused_, [&](const refused_plugin& r) { return r.plugin_id == plugin_id; });
}

std::optional<std::vector<std::filesystem::path>> connector_registry::candidates() const {
  std::filesystem::path dir(config_.plugins.dir);
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".so" && it->is_regular_file(type_ec)) files.push_back(it->path());
  }
  if (ec) {
    spdlog::error("plugins.dir {}: {}", dir.string(), ec.message());
    return std::nullopt;
  }
  std::sort(files.begin(), files.end());
  const auto& allow = config_.plugins.allow;
  std::erase_if(files, [&](const std::filesystem::path& f) {
    bool skipped = !allow.empty() && std::find(allow.begin(), allow.end(), f.stem().string()) == allow.end();
    if (skipped) spdlog::debug("plugin {} skipped: not in plugins.allow", f.filename().string());
    return skipped;
  });
  return files;
}

const connector_section& connector_registry::section_of(const std::string& plugin_id) const {
  static const connector_section empty_section;
  auto it = sections_.find(plugin_id);
  return it == sections_.end() ? empty_section : it->second;
}

connector_registry::section_changes connector_registry::compare_sections(
    const std::map<std::string, connector_section>& next) const {
  std::set<std::string> ids;
  for (const auto& conn : all()) ids.insert(conn->id());
  for (const auto& [id, section] : next) ids.insert(id);
  static const connector_section absent;
  section_changes out;
  for (const auto& id : ids) {
    auto it = next.find(id);
    const auto& wanted = it == next.end() ? absent : it->second;
    (wanted.to_json() == section_of(id).to_json() ? out.unchanged : out.changed).push_back(id);
  }
  return out;
}

void connector_registry::reconfigure(const std::string& plugin_id, const connector_section& section) {
  if (stopping_) return;
  auto file = std::filesystem::path(config_.plugins.dir) / (plugin_id + ".so");
  if (auto conn = find(plugin_id)) return replace(conn, file, true, section);
  // Not serving (refused, or no file yet): the new section is the one to load with whenever it comes.
  sections_[plugin_id] = section;
  refused_sha_.erase(plugin_id);
  auto listed = candidates();
  if (listed && std::find(listed->begin(), listed->end(), file) != listed->end()) add(file);
  if (find(plugin_id)) return;
  if (auto sha = file_sha256(file)) refused_sha_[plugin_id] = *sha;  // not retried until the file or section changes
}

boost::system::result<std::shared_ptr<plugin_generation>, std::string> connector_registry::prepare(
    const std::filesystem::path& file, const std::shared_ptr<connector>& conn, const connector_section& section) {
  auto library = load_plugin_library(file, cache_dir_);
  if (!library) return library.error();
  const auto& manifest = (*library)->manifest;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, other] : loaded_)
      if (id != conn->id() && other->manifest()->card_id == manifest.card_id)
        return "connector_card_id " + manifest.card_id + " is already served by another plugin";
  }
  const auto& id = conn->id();
  auto g = std::make_shared<plugin_generation>(*library, section, next_generation_++, conn, health_of(conn),
                                               hooks_, io_, pool_);
  std::string error;
  if (!g->create(error)) {
    // The plugin names the key ("config.greeting: ..."); add where it is in the file.
    std::string key = error.substr(0, error.find(':'));
    auto line = section.key_lines.find(key);
    std::string where = "connectors." + id + "." + error;
    if (line != section.key_lines.end())
      where = (config_.source_path.empty() ? std::string("<config>") : config_.source_path) + ":" +
              std::to_string(line->second) + ": " + where;
    return "config rejected: " + where;
  }
  return g;
}

void connector_registry::add(const std::filesystem::path& file) {
  std::string id = file.stem().string();
  if (!valid_plugin_id(id)) return refuse(file, "the file name is not a plugin id (1-32 of a-z 0-9 -)");
  {
    std::lock_guard lock(mutex_);
    if (loaded_.size() >= max_plugins)
      return refuse(file, "at most " + std::to_string(max_plugins) + " plugins are loaded");
  }
  auto conn = std::make_shared<connector>(id, config_.plugins, io_, pool_);
  auto g = prepare(file, conn, section_of(id));
  if (!g) return refuse(file, g.error());
  if (hooks_.health_changed)
    conn->on_health_change([listener = hooks_.health_changed, id](health_state h) { listener(id, h); });
  conn->install(*g);
  auto marker = marker_for(**g, cache_dir_);
  auto started = start_marked(**g, marker);
  if (!started.ok) {
    (*g)->stop(stop_limit);
    return refuse(file, start_failure(started));
  }
  const auto& m = *conn->manifest();
  spdlog::info("plugin {} loaded: card {} version {} generation {} config_digest {}", id, m.card_id, m.card_version,
               conn->generation(), conn->config_digest());
  clear_refusal(id);
  {
    std::lock_guard lock(mutex_);
    loaded_.emplace(id, conn);
  }
  if (told_.added) told_.added(*conn);
}

void connector_registry::replace(const std::shared_ptr<connector>& conn, const std::filesystem::path& file,
                                 bool forced, const connector_section& section) {
  auto old = conn->current();
  const auto& id = conn->id();
  // Listed in `refused` only once last_reload says so too: a reader of both never sees them disagree.
  auto list_refusal = [&](const std::string& reason) {
    std::lock_guard lock(mutex_);
    std::erase_if(refused_, [&](const refused_plugin& r) { return r.plugin_id == id; });
    refused_.push_back({file.string(), id, reason});
  };
  auto failed = [&](std::string reason, const std::string& sha) {
    spdlog::error("plugin {} reload refused, generation {} keeps serving: {}", id, old->number(), reason);
    refused_sha_[id] = sha;
    return reason;
  };
  auto sha = file_sha256(file);
  auto refused_before = refused_sha_.find(id);
  bool refused_already = refused_before != refused_sha_.end() && sha && refused_before->second == *sha;
  if (!forced && sha && (*sha == old->library().sha256 || refused_already)) return;

  auto next = prepare(file, conn, section);
  std::string old_card = old->manifest()->card_id;
  if (next && (*next)->manifest()->card_id != old_card)
    next = "connector_card_id changed from " + old_card + " to " + (*next)->manifest()->card_id;
  if (!next) {
    // Nothing was paused: the old generation never stopped serving.
    auto reason = failed(next.error(), sha ? *sha : "");
    conn->note_reload({0, false, reason, old->number(), old->number()});
    return list_refusal(reason);
  }

  auto paused_at = std::chrono::steady_clock::now();
  conn->pause();
  auto still_running = old->drain(paused_at + std::chrono::seconds(config_.plugins.reload_pause_max_s));
  if (still_running > 0)
    spdlog::warn("plugin {}: {} calls of generation {} still running at its stop", id, still_running, old->number());
  if (auto stopped = old->stop(stop_limit); !stopped.ok)
    spdlog::warn("plugin {} generation {} stop: {}", id, old->number(), stopped.code);
  auto marker = marker_for(**next, cache_dir_);
  auto started = start_marked(**next, marker);
  if (started.ok) {
    clear_refusal(id);
    if (&section != &section_of(id)) sections_[id] = section;
    conn->resume(*next, {0, true, "", old->number(), (*next)->number()});
    auto record = conn->last_reload().value_or(reload_record{});
    spdlog::info("plugin {} reloaded: generation {} -> {}, version {} -> {}, paused {} ms ({} calls held)", id,
                 old->number(), (*next)->number(), old->manifest()->card_version, (*next)->manifest()->card_version,
                 record.pause_ms, record.held_calls);
    if (told_.reloaded) told_.reloaded(id);
    return;
  }
  (*next)->stop(stop_limit);
  std::string reason = failed(start_failure(started), sha ? *sha : "");
  // The old library serves again, in a fresh instance with its generation number: a stopped instance is not
  // asked to start twice.
  auto again = std::make_shared<plugin_generation>(old->library_handle(), section_of(id), old->number(), conn,
                                                   health_of(conn), hooks_, io_, pool_);
  std::string error;
  call_result restarted;
  restarted.code = "create_failed";
  std::optional<start_marker> again_marker;
  if (again->create(error)) {
    again_marker.emplace(cache_dir_, again->library().sha256, again->id(), again->library().file);
    restarted = start_marked(*again, *again_marker);
  }
  if (!restarted.ok) {
    spdlog::error("plugin {}: generation {} did not start again ({}); it is down", id, old->number(), restarted.code);
    again->report_health(health_state::down, "restart_failed");
  }
  conn->resume(again, {0, false, reason, old->number(), old->number()});
  list_refusal(reason);
}

void connector_registry::remove(const std::shared_ptr<connector>& conn) {
  auto g = conn->current();
  conn->pause();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(config_.plugins.reload_pause_max_s);
  auto still_running = g->drain(deadline);
  if (still_running > 0) spdlog::warn("plugin {}: {} calls still running at its removal", conn->id(), still_running);
  {
    // Unlisted before its sockets close: a client that sees the close finds no such plugin any more.
    std::lock_guard lock(mutex_);
    loaded_.erase(conn->id());
  }
  if (told_.removed) told_.removed(conn->id());
  conn->retire();
  if (auto stopped = g->stop(stop_limit); !stopped.ok) spdlog::warn("plugin {} stop: {}", conn->id(), stopped.code);
  clear_refusal(conn->id());
  spdlog::info("plugin {} removed: its file is gone; its channels stay stored for its return", conn->id());
}

void connector_registry::load_all() {
  // Before any start: a marker the last run left names the build that killed it.
  collect_start_markers(cache_dir_);
  for (const auto& file : candidates().value_or(std::vector<std::filesystem::path>{})) {
    if (find(file.stem().string())) continue;
    add(file);
  }
  for (const auto& [id, section] : sections_)
    if (!find(id)) spdlog::warn("connectors.{} is configured but no such plugin is loaded", id);
}

void connector_registry::sync_dir(const std::string& forced_id) {
  // A folder that cannot be read (gone, renamed, no permission) changes nothing: it must not look empty.
  auto listed = candidates();
  if (!listed) return;
  const auto& files = *listed;
  std::vector<std::shared_ptr<connector>> gone;
  for (const auto& conn : all())
    if (std::none_of(files.begin(), files.end(), [&](const auto& f) { return f.stem() == conn->id(); }))
      gone.push_back(conn);
  for (const auto& conn : gone) remove(conn);
  for (const auto& file : files) {
    if (stopping_) return;
    std::string id = file.stem().string();
    bool forced = id == forced_id;
    if (auto conn = find(id)) {
      replace(conn, file, forced, section_of(id));
      continue;
    }
    auto sha = file_sha256(file);
    auto refused_before = refused_sha_.find(id);
    if (!forced && sha && refused_before != refused_sha_.end() && refused_before->second == *sha) continue;
    add(file);
    if (!find(id) && sha) refused_sha_[id] = *sha;
  }
}

void connector_registry::queue(std::function<void()> task) {
  boost::asio::post(reload_thread_, [this, task = std::move(task)] {
    if (!stopping_) task();
  });
}

void connector_registry::rescan() {
  if (stopping_ || rescan_queued_.exchange(true)) return;
  queue([this] {
    rescan_queued_ = false;
    sync_dir("");
  });
}

bool connector_registry::knows(const std::string& plugin_id) const {
  if (!valid_plugin_id(plugin_id)) return false;
  std::error_code ec;
  return find(plugin_id) ||
         std::filesystem::is_regular_file(std::filesystem::path(config_.plugins.dir) / (plugin_id + ".so"), ec);
}

bool connector_registry::request_reload(const std::string& plugin_id) {
  if (stopping_ || !knows(plugin_id)) return false;
  queue([this, plugin_id] { sync_dir(plugin_id); });
  return true;
}

void connector_registry::wait_idle() {
  std::promise<void> reached;
  boost::asio::post(reload_thread_, [&reached] { reached.set_value(); });
  reached.get_future().wait();
}

void connector_registry::stop_all() {
  stopping_ = true;
  wait_idle();
  std::map<std::string, std::shared_ptr<connector>, std::less<>> loaded;
  {
    std::lock_guard lock(mutex_);
    loaded.swap(loaded_);
  }
  for (auto& [id, conn] : loaded) {
    conn->retire();
    auto r = conn->current()->stop(stop_limit);
    if (!r.ok) spdlog::warn("plugin {} stop: {}", id, r.code);
    else spdlog::info("plugin {} stopped", id);
  }
}

std::shared_ptr<connector> connector_registry::find(std::string_view plugin_id) const {
  std::lock_guard lock(mutex_);
  auto it = loaded_.find(plugin_id);
  return it == loaded_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<connector>> connector_registry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<connector>> out;
  for (auto& [id, c] : loaded_) out.push_back(c);
  return out;
}

std::vector<refused_plugin> connector_registry::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

}  // namespace xconn
